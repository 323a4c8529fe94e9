/**
 * plane.json carries the bridge token, so it is written whole or not at all, 0600, and never
 * through a link: to a temporary file opened O_CREAT|O_EXCL|O_NOFOLLOW, then renamed into place.
 */
import { chmodSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planeFilePath, readPlaneFile, writePlaneFile, type PlaneFile } from './plane-file';
import { temporaryNameFor } from '../base/private-files';
import { useTempFolders, useUmask } from '../../tests/helpers/temp-folders';

const folder = useTempFolders('ap-plane-file-');

useUmask(0o022);

const info: PlaneFile = { pid: process.pid, url: 'http://127.0.0.1:4567', port: 4567, token: 'secret-token', startedAt: '2026-01-01T00:00:00.000Z' };

describe.runIf(process.platform !== 'win32')('plane.json', () => {
  it('is written 0600 under umask 022, and replaces an older one whole (a new inode, by rename)', () => {
    const dir = folder();
    writePlaneFile(dir, { ...info, port: 1 });
    const first = statSync(planeFilePath(dir)).ino;
    writePlaneFile(dir, info);
    // Renamed into place, never truncated and rewritten: a reader sees the old file or the new
    // one, and the name points at a new inode.
    expect(statSync(planeFilePath(dir)).ino).not.toBe(first);
    expect(statSync(planeFilePath(dir)).mode & 0o777).toBe(0o600);
    expect(readPlaneFile(dir)).toEqual(info);
  });

  it('does not follow a symlink planted at its temporary name: the target is unchanged', () => {
    const dir = folder();
    const victim = join(folder(), 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    chmodSync(victim, 0o644);
    const temporary = temporaryNameFor(planeFilePath(dir));
    expect(temporary.startsWith(`${planeFilePath(dir)}.`)).toBe(true);
    symlinkSync(victim, temporary);
    writePlaneFile(dir, info);
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    expect(lstatSync(planeFilePath(dir)).isFile()).toBe(true);
    expect(readPlaneFile(dir)).toEqual(info);
  });

  it('does not follow a symlink planted at plane.json itself: the link is replaced', () => {
    const dir = folder();
    const victim = join(folder(), 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    symlinkSync(victim, planeFilePath(dir));
    writePlaneFile(dir, info);
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    expect(lstatSync(planeFilePath(dir)).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(planeFilePath(dir), 'utf8'))).toEqual(info);
  });
});
