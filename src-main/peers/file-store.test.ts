/**
 * The file store (docs/PEER-PROTOCOL.md, "The file store"): the file lifecycle at several sizes,
 * every traversal spelling refused with nothing written outside the root (the parent directory is
 * compared byte for byte before and after), links planted in the store never followed, atomic
 * replacement, and the vanishing-upload bug (a relative store path that moved with the working
 * directory) pinned down with a real `process.chdir`.
 */
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, realpathSync, rmSync, symlinkSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore, FileStoreError, filenameProblem, type FileStoreErrorCode } from './file-store';

const MAX = 256 * 1024;
let base: string;
let parent: string;
let rootDir: string;
let store: FileStore;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'ap-file-store-')));
  parent = join(base, 'parent');
  rootDir = join(parent, 'store');
  mkdirSync(parent);
  writeFileSync(join(parent, 'secret.txt'), 'outside the store');
  store = new FileStore({ root: rootDir, maxFileBytes: MAX });
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** Every path under `dir` with a digest of its content (or its link target), recursively. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      const key = relative(dir, full);
      if (entry.isSymbolicLink()) out[key] = `link`;
      else if (entry.isDirectory()) {
        out[key] = 'dir';
        walk(full);
      } else out[key] = createHash('sha256').update(readFileSync(full)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

async function refusal(promise: Promise<unknown>): Promise<FileStoreError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FileStoreError);
  return error as FileStoreError;
}

async function expectCode(promise: Promise<unknown>, code: FileStoreErrorCode): Promise<FileStoreError> {
  const error = await refusal(promise);
  expect(error.code).toBe(code);
  return error;
}

describe('FileStore lifecycle', () => {
  it('creates a missing root, absolute and real', () => {
    expect(isAbsolute(store.root)).toBe(true);
    expect(store.root).toBe(rootDir);
    expect(lstatSync(rootDir).isDirectory()).toBe(true);
  });

  it.each([
    ['1 byte', 1],
    ['100 KB', 100 * 1024],
    ['exactly maxFileBytes', MAX],
  ])('round-trips upload -> list -> read -> delete at %s', async (_label, size) => {
    const content = Buffer.alloc(size);
    for (let i = 0; i < size; i++) content[i] = (i * 31 + 7) & 0xff;
    const saved = await store.save('data.bin', content);
    expect(saved).toMatchObject({ filename: 'data.bin', bytes: size });
    expect(await store.list()).toEqual([{ filename: 'data.bin', bytes: size, modifiedAt: expect.any(Number) as number }]);
    expect((await store.read('data.bin')).equals(content)).toBe(true);
    expect(readFileSync(join(rootDir, 'data.bin')).equals(content)).toBe(true);
    await store.delete('data.bin');
    expect(await store.list()).toEqual([]);
    await expectCode(store.read('data.bin'), 'not-found');
  });

  it('refuses content one byte over the limit and writes nothing', async () => {
    const error = await expectCode(store.save('big.bin', Buffer.alloc(MAX + 1)), 'too-large');
    expect(error.message).toContain(`${MAX + 1} bytes`);
    expect(readdirSync(rootDir)).toEqual([]);
  });

  it('refuses to read back a file that was made oversize behind its back', async () => {
    writeFileSync(join(rootDir, 'planted.bin'), Buffer.alloc(MAX + 1));
    await expectCode(store.read('planted.bin'), 'too-large');
  });

  it('replaces a file atomically: readers see the old or the new content, never half', async () => {
    const size = 200 * 1024;
    const a = Buffer.alloc(size, 0x61);
    const b = Buffer.alloc(size, 0x62);
    await store.save('doc.txt', a);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 40; i++) await store.save('doc.txt', i % 2 ? a : b);
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const seen = await store.read('doc.txt');
      expect(seen.length).toBe(size);
      expect(seen.equals(a) || seen.equals(b)).toBe(true);
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
    expect(readdirSync(rootDir)).toEqual(['doc.txt']); // no temp files left behind
  });

  it('lists regular files by name and hides links, directories and temp files', async () => {
    await store.save('b.txt', Buffer.from('bb'));
    await store.save('a.txt', Buffer.from('a'));
    mkdirSync(join(rootDir, 'subdir'));
    writeFileSync(join(rootDir, '.partial-leftover'), 'x');
    symlinkSync(join(parent, 'secret.txt'), join(rootDir, 'link.txt'));
    expect((await store.list()).map((f) => [f.filename, f.bytes])).toEqual([
      ['a.txt', 1],
      ['b.txt', 2],
    ]);
  });

  it('deleting a missing file is not-found; a directory is not-a-file', async () => {
    const error = await expectCode(store.delete('nothing.txt'), 'not-found');
    expect(error.message).toContain('nothing.txt');
    mkdirSync(join(rootDir, 'subdir'));
    await expectCode(store.delete('subdir'), 'not-a-file');
    await expectCode(store.read('subdir'), 'not-a-file');
    await expectCode(store.save('subdir', Buffer.from('x')), 'not-a-file');
  });

  it('accepts ordinary names, including spaces, Unicode, inner dots and 255 bytes', async () => {
    for (const name of ['report.md', 'name with spaces.txt', 'ünïcödé.txt', 'a..b', 'x'.repeat(255), 'é'.repeat(127)]) {
      expect(filenameProblem(name)).toBeNull();
      await store.save(name, Buffer.from(name));
      expect((await store.read(name)).toString()).toBe(name);
    }
  });
});

describe('FileStore traversal guard', () => {
  const hostile: Array<[string, RegExp]> = [
    ['../x', /path separator/],
    ['../../secret.txt', /path separator/],
    ['../secret.txt', /path separator/],
    ['..\\x', /path separator/],
    ['..\\..\\secret.txt', /path separator/],
    ['/etc/x', /path separator/],
    ['/etc/passwd', /path separator/],
    ['C:\\x', /path separator/],
    ['C:x', /':'/],
    ['x:stream', /':'/],
    ['a/b', /path separator/],
    ['a\\b', /path separator/],
    ['%2e%2e%2fx', /percent-encoded.*"\.\.\/x"/],
    ['%2e%2e%2f', /percent-encoded/],
    ['%2E%2E%5Csecret.txt', /percent-encoded/],
    ['..%2fsecret.txt', /percent-encoded/],
    ['..%252fsecret.txt', /percent-encoded/],
    ['%2fetc%2fpasswd', /percent-encoded/],
    ['%00', /percent-encoded/],
    ['%', /'%'/],
    ['%zz', /'%'/],
    ['100%', /'%'/],
    ['x\u0000y', /NUL/],
    ['x\u0000', /NUL/],
    ['\n', /control/],
    ['x\ry', /control/],
    ['x\u007fy', /control/],
    ['x\u0085y', /U\+0085.*control/],
    ['x\u009f', /U\+009F.*control/],
    ['invoice\u202Etxt.exe', /U\+202E.*format/],
    ['\u200Bx.txt', /U\+200B.*format/],
    ['x\uFEFF.txt', /U\+FEFF.*format/],
    ['x\u2066y\u2069', /U\+2066.*format/],
    ['soft\u00ADhyphen', /U\+00AD.*format/],
    ['line\u2028break', /U\+2028.*line separator/],
    ['half\uD800.txt', /U\+D800.*lone surrogate/],
    ['', /empty/],
    ['.', /directory reference/],
    ['..', /directory reference/],
    ['.hidden', /dot/],
    ['.partial-0123', /dot/],
    ['CON', /device/],
    ['nul.txt', /device/],
    ['x'.repeat(256), /255 bytes/],
    ['é'.repeat(128), /255 bytes/],
  ];

  it.each(hostile)('refuses %j for save, read and delete, writing nothing anywhere', async (name, reason) => {
    const before = snapshot(base);
    for (const attempt of [store.save(name, Buffer.from('pwned')), store.read(name), store.delete(name)]) {
      const error = await expectCode(attempt, 'invalid-filename');
      expect(error.message).toMatch(reason);
    }
    expect(snapshot(base)).toEqual(before);
    expect(readFileSync(join(parent, 'secret.txt'), 'utf8')).toBe('outside the store');
  });

  it('refuses non-string names and non-byte content', async () => {
    await expectCode(store.save(42 as unknown as string, Buffer.from('x')), 'invalid-filename');
    await expect(store.save('ok.txt', 'text' as unknown as Buffer)).rejects.toThrow(TypeError);
  });
});

describe('FileStore and symbolic links', () => {
  beforeEach(() => {
    symlinkSync(join(parent, 'secret.txt'), join(rootDir, 'link.txt'));
    mkdirSync(join(parent, 'elsewhere'));
    symlinkSync(join(parent, 'elsewhere'), join(rootDir, 'dirlink'));
  });

  it('never reads through a link', async () => {
    const error = await expectCode(store.read('link.txt'), 'not-a-file');
    expect(error.message).toMatch(/symbolic link/);
    await expectCode(store.read('dirlink'), 'not-a-file');
  });

  it('never writes through a link, and leaves the link and its target alone', async () => {
    const before = snapshot(base);
    await expectCode(store.save('link.txt', Buffer.from('pwned')), 'not-a-file');
    await expectCode(store.save('dirlink', Buffer.from('pwned')), 'not-a-file');
    expect(snapshot(base)).toEqual(before);
    expect(readFileSync(join(parent, 'secret.txt'), 'utf8')).toBe('outside the store');
    expect(lstatSync(join(rootDir, 'link.txt')).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(parent, 'elsewhere'))).toEqual([]);
  });

  it('never deletes through a link', async () => {
    const before = snapshot(base);
    await expectCode(store.delete('link.txt'), 'not-a-file');
    await expectCode(store.delete('dirlink'), 'not-a-file');
    expect(snapshot(base)).toEqual(before);
  });

  it('refuses to work once the root itself has been swapped for a link', async () => {
    await store.save('kept.txt', Buffer.from('kept'));
    renameSync(rootDir, join(parent, 'moved'));
    symlinkSync(join(parent, 'elsewhere'), rootDir);
    const before = snapshot(base);
    await expectCode(store.save('x.txt', Buffer.from('pwned')), 'root-moved');
    await expectCode(store.list(), 'root-moved');
    await expectCode(store.read('kept.txt'), 'root-moved');
    expect(snapshot(base)).toEqual(before);
  });
});

describe('FileStore and hard links', () => {
  // A hard link is not a link the store can see by lstat: it is a second name of the same
  // inode, a regular file in every other respect. Planted in the store it reads, overwrites
  // or deletes whatever file elsewhere on the file system it shares an inode with.
  beforeEach(() => {
    linkSync(join(parent, 'secret.txt'), join(rootDir, 'hard.txt'));
  });

  it('never reads, overwrites or deletes a name that has another hard link, and does not list it', async () => {
    const before = snapshot(base);
    const read = await expectCode(store.read('hard.txt'), 'not-a-file');
    expect(read.message).toMatch(/hard link/);
    expect((await expectCode(store.save('hard.txt', Buffer.from('pwned')), 'not-a-file')).message).toMatch(/hard link/);
    expect((await expectCode(store.delete('hard.txt'), 'not-a-file')).message).toMatch(/hard link/);
    expect((await store.list()).map((f) => f.filename)).not.toContain('hard.txt');
    expect(snapshot(base)).toEqual(before);
    expect(readFileSync(join(parent, 'secret.txt'), 'utf8')).toBe('outside the store');
    expect(lstatSync(join(rootDir, 'hard.txt')).nlink).toBe(2);
  });

  it('refuses a stored file that gained a second name after it was stored', async () => {
    await store.save('mine.txt', Buffer.from('mine'));
    expect((await store.read('mine.txt')).toString()).toBe('mine');
    linkSync(join(rootDir, 'mine.txt'), join(parent, 'copy.txt'));
    expect((await expectCode(store.read('mine.txt'), 'not-a-file')).message).toMatch(/hard link/);
  });
});

describe('FileStore root resolution (the vanishing-upload bug)', () => {
  it('stores a relative root as absolute, and keeps working after process.chdir', async () => {
    const original = process.cwd();
    const sandbox = join(base, 'sandbox');
    mkdirSync(sandbox);
    try {
      process.chdir(base);
      const relativeStore = new FileStore({ root: 'mcpv2_files', maxFileBytes: MAX });
      expect(relativeStore.root).toBe(join(base, 'mcpv2_files'));
      // What ToolSandbox did: run the tool call with the cwd in a throwaway directory.
      process.chdir(sandbox);
      await relativeStore.save('upload.md', Buffer.from('# still here'));
      rmSync(sandbox, { recursive: true, force: true });
      process.chdir(original);
      expect(readFileSync(join(base, 'mcpv2_files', 'upload.md'), 'utf8')).toBe('# still here');
      expect((await relativeStore.list()).map((f) => f.filename)).toEqual(['upload.md']);
      expect((await relativeStore.read('upload.md')).toString()).toBe('# still here');
      await relativeStore.delete('upload.md');
    } finally {
      process.chdir(original);
    }
  });

  it('refuses nonsense options', () => {
    expect(() => new FileStore({ root: '', maxFileBytes: 1 })).toThrow(TypeError);
    expect(() => new FileStore({ root: rootDir, maxFileBytes: 0 })).toThrow(RangeError);
    expect(() => new FileStore({ root: rootDir, maxFileBytes: 1.5 })).toThrow(RangeError);
  });
});
