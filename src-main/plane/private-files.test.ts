/**
 * Everything the plane writes in its data dir is the user's alone: folders 0700, files 0600,
 * SQLite's own -wal and -shm included, whatever the process umask and whether or not the folder
 * existed before. Run under umask 022 (the usual default, under which SQLite and plain
 * `writeFileSync` make 0644 files) on a folder that pre-exists 0700.
 */
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { journalPath } from '../journal/sqlite-store';
import { call } from '../../tests/support/runtime-support';
import { builtinTools, workspaceOf } from '../runtime/tools';
import { createLogger } from '../base/logger';
import { createPlane, type Plane } from './plane';
import { writePlaneFile } from './plane-file';
import { appendPrivateFile, writePrivateFileAtomically } from '../base/private-files';
import { useUmask } from '../../tests/helpers/temp-folders';

const posix = process.platform !== 'win32';
const made: string[] = [];
const planes: Plane[] = [];
function folder(mode = 0o700): string {
  const dir = mkdtempSync(join(tmpdir(), 'ap-private-'));
  chmodSync(dir, mode);
  made.push(dir);
  return dir;
}
afterEach(async () => {
  for (const plane of planes.splice(0)) await plane.close().catch(() => undefined);
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

useUmask(0o022);

/** Every entry under `dir` whose mode is not 0700 (folders) or 0600 (files), as `path mode`. */
function looseEntries(dir: string): string[] {
  const loose: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const stat = lstatSync(path);
      const mode = stat.mode & 0o777;
      if (stat.isDirectory()) {
        if (mode !== 0o700) loose.push(`${relative(dir, path)}/ ${mode.toString(8)}`);
        walk(path);
      } else if (mode !== 0o600) {
        loose.push(`${relative(dir, path)} ${mode.toString(8)}`);
      }
    }
  };
  walk(dir);
  return loose;
}

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe.runIf(posix)('files in the data dir are the user\'s alone (umask 022)', () => {
  it('a plane on a pre-existing 0700 folder: every folder 0700, every file 0600, -wal and -shm included', async () => {
    const dir = folder();
    const plane = await createPlane({ dataDir: dir, version: 'test', host: 'headless', demoPeers: true, logger: createLogger(join(dir, 'plane.log'), () => undefined) });
    planes.push(plane);
    await call(plane, 'runs.start', { agent: 'write-note', input: { title: 'a', topic: 'a private input' } });
    await builtinTools.get('file.write')!.run({ path: 'notes/b.md', content: 'a note' }, { workspace: workspaceOf(dir) });
    await plane.journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: 'alpha', event: 'started', address: 'mcpv2://127.0.0.1:9/mcpv2' } });
    plane.logger.log('warn', 'a line for the log');
    writePlaneFile(dir, { pid: process.pid, url: 'http://127.0.0.1:9', port: 9, token: 't', startedAt: new Date().toISOString() });
    // While the plane is open SQLite keeps its write-ahead log and shared-memory index beside
    // the database: the WAL holds the newest records (a run's input) in clear.
    expect(existsSync(`${journalPath(dir)}-wal`)).toBe(true);
    expect(existsSync(`${journalPath(dir)}-shm`)).toBe(true);
    expect(readFileSync(`${journalPath(dir)}-wal`).includes('a private input') || readFileSync(journalPath(dir)).includes('a private input')).toBe(true);
    expect(looseEntries(dir)).toEqual([]);
    await plane.close();
    expect(looseEntries(dir)).toEqual([]);
  });

  it('tightens a journal, -wal and -shm left 0644 by an older version', async () => {
    const dir = folder();
    const first = await Journal.open({ dataDir: dir });
    await first.close();
    chmodSync(journalPath(dir), 0o644);
    writeFileSync(`${journalPath(dir)}-wal`, '', { mode: 0o644 });
    writeFileSync(`${journalPath(dir)}-shm`, '', { mode: 0o644 });
    chmodSync(`${journalPath(dir)}-wal`, 0o644);
    chmodSync(`${journalPath(dir)}-shm`, 0o644);
    const journal = await Journal.open({ dataDir: dir });
    try {
      await journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: 'p1', event: 'started', address: 'mcpv2://127.0.0.1:9/mcpv2' } });
      expect([modeOf(journalPath(dir)), modeOf(`${journalPath(dir)}-wal`), modeOf(`${journalPath(dir)}-shm`)]).toEqual(['600', '600', '600']);
    } finally {
      await journal.close();
    }
  });

  it('refuses to open the journal through a symlink planted at -wal', async () => {
    const dir = folder();
    const first = await Journal.open({ dataDir: dir });
    await first.close();
    const elsewhere = join(folder(), 'victim');
    writeFileSync(elsewhere, 'untouched');
    chmodSync(elsewhere, 0o644);
    symlinkSync(elsewhere, `${journalPath(dir)}-wal`);
    await expect(Journal.open({ dataDir: dir })).rejects.toThrow(/symbolic link/);
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched');
    expect(modeOf(elsewhere)).toBe('644');
  });

  it('a peer\'s log is not opened through a symlink planted at peers/<id>/peer.log', async () => {
    const dir = folder();
    const plane = await createPlane({ dataDir: dir, version: 'test', host: 'headless', demoPeers: true });
    planes.push(plane);
    const victim = join(folder(), 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    symlinkSync(victim, plane.peers.logFile('alpha'));
    await expect(plane.peers.start('alpha')).rejects.toThrow(/symbolic link/);
    await plane.close();
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
  });
});

describe.runIf(posix)('private file helpers', () => {
  it('appendPrivateFile creates 0600 under umask 022, tightens a 0644 file, refuses a symlink', () => {
    const dir = folder();
    const log = join(dir, 'a.log');
    appendPrivateFile(log, 'one\n');
    expect(modeOf(log)).toBe('600');
    chmodSync(log, 0o644);
    appendPrivateFile(log, 'two\n');
    expect(modeOf(log)).toBe('600');
    expect(readFileSync(log, 'utf8')).toBe('one\ntwo\n');
    const victim = join(folder(), 'victim');
    writeFileSync(victim, 'untouched');
    const link = join(dir, 'b.log');
    symlinkSync(victim, link);
    expect(() => appendPrivateFile(link, 'x')).toThrow(/symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
  });

  it('writePrivateFileAtomically replaces the file whole, 0600, and never writes through a link', () => {
    const dir = folder();
    const target = join(dir, 'state.json');
    writePrivateFileAtomically(target, 'first');
    expect(readFileSync(target, 'utf8')).toBe('first');
    expect(modeOf(target)).toBe('600');
    // A link planted at the final name is replaced, not written through.
    const victim = join(folder(), 'victim');
    writeFileSync(victim, 'untouched');
    rmSync(target);
    symlinkSync(victim, target);
    writePrivateFileAtomically(target, 'second');
    expect(lstatSync(target).isSymbolicLink()).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('second');
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
  });
});
