/**
 * Whether the Electron binary is installed. The `electron` package's own `require` downloads
 * the binary when it is missing, which on a machine without network hangs or fails; so this
 * reads the same `path.txt` the package would and checks the file is really there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appRoot } from '../base/app-paths';

export function electronBinaryPath(): string | null {
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    const candidate = join(process.env.ELECTRON_OVERRIDE_DIST_PATH, 'electron');
    return existsSync(candidate) ? candidate : null;
  }
  const dir = join(appRoot(), 'node_modules', 'electron');
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const binary = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : null;
}
