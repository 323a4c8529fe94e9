/**
 * A data dir another local user can write, or one that is not ours, is refused before anything
 * in it is read or written: through `resolveDataDir` (every front end), `Journal.open` and
 * `createPlane` (embedders and tests). The refusal names the folder and the command that fixes it.
 */
import { chmodSync, chownSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { resolveDataDir } from '../base/app-paths';
import { ensurePrivateDataDir, UnsafeDataDirError } from '../base/data-dir-guard';
import { createPlane } from './plane';
import { useTempFolders } from '../../tests/helpers/temp-folders';

const folder = useTempFolders('ap-guard-');

const posix = process.platform !== 'win32';
const root = process.getuid?.() === 0;

/** Every way in refuses it with the same error, and leaves the folder as it found it. */
async function expectRefusedEverywhere(dir: string, why: RegExp, fix: RegExp): Promise<void> {
  const before = readdirSync(dir);
  const refused = (error: unknown) => {
    expect(error).toBeInstanceOf(UnsafeDataDirError);
    const message = (error as Error).message;
    expect(message).toContain(dir);
    expect(message).toMatch(why);
    expect(message).toMatch(fix);
    return true;
  };
  expect(() => resolveDataDir(dir)).toThrow(UnsafeDataDirError);
  try {
    resolveDataDir(dir);
  } catch (error) {
    refused(error);
  }
  await Journal.open({ dataDir: dir }).then(
    () => expect.unreachable('Journal.open accepted an unsafe data dir'),
    refused,
  );
  await createPlane({ dataDir: dir, version: 'test', host: 'headless' }).then(
    () => expect.unreachable('createPlane accepted an unsafe data dir'),
    refused,
  );
  expect(readdirSync(dir)).toEqual(before);
}

describe.runIf(posix)('the data dir belongs to its user', () => {
  it.runIf(root)('refuses a data dir owned by another uid', async () => {
    const dir = folder();
    chmodSync(dir, 0o700);
    chownSync(dir, 65534, 65534);
    await expectRefusedEverywhere(dir, /owned by uid 65534/, /chown/);
  });

  it('refuses a data dir others can write (0777), naming the path and `chmod 700`', async () => {
    const dir = folder();
    chmodSync(dir, 0o777);
    await expectRefusedEverywhere(dir, /writable by group or others \(mode 0777\)/, /chmod 700/);
  });

  it('refuses a data dir its group can write (0770)', async () => {
    const dir = folder();
    chmodSync(dir, 0o770);
    await expectRefusedEverywhere(dir, /writable by group or others \(mode 0770\)/, /chmod 700/);
  });

  it('accepts a folder of ours that only we can write (0700, 0755) and creates a missing one 0700', async () => {
    const own = folder();
    chmodSync(own, 0o755);
    expect(() => ensurePrivateDataDir(own)).not.toThrow();
    expect(statSync(own).mode & 0o777).toBe(0o755);
    const fresh = join(folder(), 'nested', 'AgentPlane');
    expect(resolveDataDir(fresh)).toBe(fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    const journal = await Journal.open({ dataDir: fresh });
    await journal.close();
  });

  it('a read-only open creates nothing and refuses the same way', async () => {
    const missing = join(folder(), 'absent');
    expect(() => ensurePrivateDataDir(missing, { create: false })).toThrow(/does not exist/);
    expect(existsSync(missing)).toBe(false);
    const open = folder();
    chmodSync(open, 0o777);
    expect(() => ensurePrivateDataDir(open, { create: false })).toThrow(UnsafeDataDirError);
  });

  it('refuses a path that is a file, not a folder', () => {
    const dir = folder();
    const file = join(dir, 'not-a-dir');
    chmodSync(dir, 0o700);
    writeFileSync(file, 'x');
    expect(() => ensurePrivateDataDir(file)).toThrow(/not a folder/);
  });
});
