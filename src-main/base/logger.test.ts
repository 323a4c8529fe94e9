/**
 * The operator log is opened without following a symlink: a link planted at the log's path
 * (today's attack made the plane append to another file) is refused, the other file untouched,
 * and the plane keeps running (a log it cannot write never takes it down).
 */
import { chmodSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, logLevelFrom } from './logger';
import { PrivateAppender } from './private-files';
import { useTempFolders, useUmask } from '../../tests/helpers/temp-folders';

const folder = useTempFolders('ap-logger-');

useUmask(0o022);

describe.runIf(process.platform !== 'win32')('operator log', () => {
  it('is created 0600 under umask 022 and appended one JSON line per entry', () => {
    const file = join(folder(), 'plane.log');
    const logger = createLogger(file, () => undefined);
    logger.log('info', 'one');
    logger.log('info', 'two', { n: 2 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { message: string });
    expect(lines.map((l) => l.message)).toEqual(['one', 'two']);
  });

  it('tightens a log left 0644 by an older version to 0600', () => {
    const file = join(folder(), 'plane.log');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    createLogger(file, () => undefined).log('info', 'one');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('does not follow a symlink planted at the log path: the target is unchanged', () => {
    const victim = join(folder(), 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    chmodSync(victim, 0o644);
    const file = join(folder(), 'plane.log');
    symlinkSync(victim, file);
    const echoed: string[] = [];
    const logger = createLogger(file, (line) => echoed.push(line));
    logger.log('error', 'this line must not reach the victim');
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    // Warnings and errors still reach stderr: the person learns of the failure there.
    expect(echoed.join('')).toContain('this line must not reach the victim');
  });
});

describe.runIf(process.platform !== 'win32')('a log held open between lines (PrivateAppender)', () => {
  it('writes every line through one descriptor until the recheck, then follows a rotated log to a new file', () => {
    const file = join(folder(), 'plane.log');
    let now = 0;
    const appender = new PrivateAppender(file, 1000, () => now);
    appender.append('one\n');
    renameSync(file, `${file}.1`);
    now = 500;
    // Within the interval the held file is still written: the rotated one gets the line.
    appender.append('two\n');
    now = 1500;
    appender.append('three\n');
    appender.close();
    expect(readFileSync(`${file}.1`, 'utf8')).toBe('one\ntwo\n');
    expect(readFileSync(file, 'utf8')).toBe('three\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('never writes through a link planted at the path while the file is held: the target stays untouched and the link is refused at the recheck', () => {
    const victim = join(folder(), 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    const file = join(folder(), 'plane.log');
    let now = 0;
    const appender = new PrivateAppender(file, 1000, () => now);
    appender.append('one\n');
    unlinkSync(file);
    symlinkSync(victim, file);
    appender.append('two\n');
    now = 2000;
    expect(() => appender.append('three\n')).toThrow(/symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
  });

  it.runIf(process.platform === 'linux')('opens far fewer descriptors than lines (the point of holding it)', () => {
    const file = join(folder(), 'plane.log');
    const logger = createLogger(file, () => undefined, 'debug');
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 200; i++) logger.log('debug', `line ${i}`);
    // One descriptor is held for the log, not one per line (and none leaked).
    expect(readdirSync('/proc/self/fd').length - before).toBeLessThanOrEqual(1);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(200);
  });
});

describe('log level', () => {
  const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: string; message: string });

  it('drops debug lines by default, before formatting them, and writes info and above', () => {
    const file = join(folder(), 'plane.log');
    const echoed: string[] = [];
    const logger = createLogger(file, (l) => echoed.push(l), logLevelFrom({}).level);
    logger.log('debug', 'POST /mcpv2 200');
    logger.log('info', 'started');
    logger.log('warn', 'slow disk');
    expect(lines(file).map((l) => l.message)).toEqual(['started', 'slow disk']);
    expect(echoed).toHaveLength(1);
    expect(logger.enabled?.('debug')).toBe(false);
    expect(logger.enabled?.('info')).toBe(true);
  });

  it('keeps debug lines at AGENTPLANE_LOG_LEVEL=debug and only errors at error, in any case', () => {
    expect(logLevelFrom({ AGENTPLANE_LOG_LEVEL: 'DEBUG' })).toEqual({ level: 'debug' });
    expect(logLevelFrom({ AGENTPLANE_LOG_LEVEL: ' error ' })).toEqual({ level: 'error' });
    const file = join(folder(), 'plane.log');
    const logger = createLogger(file, () => undefined, 'error');
    logger.log('warn', 'dropped');
    logger.log('error', 'kept');
    expect(lines(file).map((l) => l.message)).toEqual(['kept']);
    const debugFile = join(folder(), 'debug.log');
    createLogger(debugFile, () => undefined, 'debug').log('debug', 'POST /mcpv2 200');
    expect(lines(debugFile)).toEqual([expect.objectContaining({ level: 'debug', message: 'POST /mcpv2 200' })]);
  });

  it('says once on stderr that a value is no level, and logs at info', () => {
    const asked = logLevelFrom({ AGENTPLANE_LOG_LEVEL: 'verbose' });
    expect(asked.level).toBe('info');
    expect(asked.problem).toContain('AGENTPLANE_LOG_LEVEL="verbose" is not a log level (use debug, info, warn, error)');
    const previous = process.env.AGENTPLANE_LOG_LEVEL;
    process.env.AGENTPLANE_LOG_LEVEL = 'verbose';
    try {
      const file = join(folder(), 'plane.log');
      const echoed: string[] = [];
      const logger = createLogger(file, (l) => echoed.push(l));
      logger.log('debug', 'dropped');
      logger.log('info', 'kept');
      expect(echoed).toHaveLength(1);
      expect(echoed[0]).toContain('is not a log level');
      expect(lines(file).map((l) => l.message)).toEqual(['kept']);
    } finally {
      if (previous === undefined) delete process.env.AGENTPLANE_LOG_LEVEL;
      else process.env.AGENTPLANE_LOG_LEVEL = previous;
    }
  });
});
