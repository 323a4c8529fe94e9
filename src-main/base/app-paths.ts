/**
 * Where the app's own files are (package.json, the built renderer) and where its data goes.
 * The code runs from three places: built into out/main (CLI, Electron), and from source under
 * vitest and tsx; walking up to the package root serves all three without a path per place.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePrivateDataDir, UnsafeDataDirError } from './data-dir-guard';

export const APP_NAME = 'AgentPlane';

let cachedRoot: string | undefined;

export function appRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (pkg.name === 'agentplane') return (cachedRoot = dir);
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('agentplane: cannot find the package root (package.json named "agentplane")');
    dir = parent;
  }
}

export function appVersion(): string {
  const pkg = JSON.parse(readFileSync(join(appRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** The built renderer (index.html and assets), served by Electron and by the web bridge. */
export function rendererDir(): string {
  return join(appRoot(), 'out', 'renderer');
}

/**
 * The OS user-data folder for the app, as Electron's `app.getPath('userData')` would give it,
 * computed without Electron so the CLI and the headless plane agree with the desktop app.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = homedir();
  switch (platform()) {
    case 'darwin':
      return join(home, 'Library', 'Application Support', APP_NAME);
    case 'win32':
      return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), APP_NAME);
    default:
      return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), APP_NAME);
  }
}

/**
 * `--data-dir` beats `AGENTPLANE_DATA_DIR` beats the OS default; the folder is created 0700, and
 * one that is not the user's alone is refused (data-dir-guard.ts) before anything reads it.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? (env.AGENTPLANE_DATA_DIR || undefined) ?? defaultDataDir(env);
  const dir = resolve(chosen);
  try {
    ensurePrivateDataDir(dir);
  } catch (error) {
    if (error instanceof UnsafeDataDirError) throw error;
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw Object.assign(new Error(`cannot use data folder ${dir} (${reason})`), { code: (error as NodeJS.ErrnoException).code });
  }
  return dir;
}
