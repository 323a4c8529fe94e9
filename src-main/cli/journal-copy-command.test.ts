/**
 * `agentplane journal copy --to <url>` through the CLI's own command, in process: a bad URL is
 * one line naming it (password never echoed); a data dir a live plane serves is refused; a copy
 * prints what it moved and verified, masked; `journal verify --data-dir --database` then reads
 * the copy against the data dir's own checkpoints.
 */
import { describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { acquirePlaneLock } from '../plane/plane-lock';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl } from '../../tests/support/postgres-support';
import { journalCli } from '../../tests/support/journal-cli';

const cli = journalCli;

async function sqliteDataDir(): Promise<string> {
  const dataDir = tempDataDir('ap-copy-cli-');
  const journal = await Journal.open({ dataDir });
  await journal.appendBatch([...runDrafts('run-a', 2), ...runDrafts('run-b', 1)]);
  await journal.close();
  return dataDir;
}

describe('agentplane journal copy', () => {
  it('refuses a URL that is not PostgreSQL, naming the flag, never echoing the password', async () => {
    const dataDir = await sqliteDataDir();
    const result = await cli('copy', '--to', 'mysql://ann:s3cret-pw@db/plane', '--data-dir', dataDir);
    expect(result.error).toMatch(/--to must be a postgres:\/\/ or postgresql:\/\/ URL, not mysql:/);
    expect(result.error).not.toContain('s3cret-pw');
  });

  it('refuses a data dir with no SQLite journal', async () => {
    const result = await cli('copy', '--to', 'postgres://ann:pw@127.0.0.1:1/plane', '--data-dir', tempDataDir());
    expect(result.error).toMatch(/holds no SQLite journal to copy/);
  });

  it.skipIf(!postgresUrl())(`refuses while a plane serves the data dir, then copies, and verify reads the copy${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, async () => {
    const dataDir = await sqliteDataDir();
    const url = await freshDatabase('cli');
    const password = new URL(url).password;
    // Held as if by another live process (this one's parent), as a serving plane would hold it.
    const lock = acquirePlaneLock(dataDir, process.ppid);
    try {
      expect((await cli('copy', '--to', url, '--data-dir', dataDir)).error).toMatch(/stop it before copying its journal/);
    } finally {
      lock.release();
    }
    const copied = await cli('copy', '--to', url, '--data-dir', dataDir);
    expect(copied.error).toBeNull();
    expect(copied.lines[0]).toMatch(/^copied 10 records to postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/cli_[0-9a-f]+$/);
    expect(copied.lines[1]).toMatch(/^verified both sides: 10 records, root [0-9a-f]{64}$/);
    expect(copied.lines.join('\n')).not.toContain(password);
    const verified = await cli('verify', '--data-dir', dataDir, '--database', url);
    expect(verified.lines[0]).toMatch(/^OK 10 records, root [0-9a-f]{64}$/);
    expect(verified.lines[0]!.split('root ')[1]).toBe(copied.lines[1]!.split('root ')[1]);
  });
});
