/**
 * `agentplane journal keys` and `agentplane journal retire-key` through the CLI's own commands,
 * in process: the keyring listed (text and JSON), a key retired, and every refusal (a key never
 * admitted, one already retired, the data dir's own key, a SQLite journal) one line that writes
 * nothing. Then `journal verify --data-dir --database` says which keys signed.
 */
import { describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { loadOrCreatePlaneKey } from '../journal/plane-key';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../../tests/support/postgres-support';
import { journalCli as cli } from '../../tests/support/journal-cli';

async function headOf(url: string): Promise<number> {
  return (await sql(url, 'SELECT COALESCE(MAX(seq), 0)::int AS n FROM agentplane.records')).rows[0].n as number;
}

describe('agentplane journal keys / retire-key', () => {
  it('say that a SQLite journal has one key and no keyring, and write nothing', async () => {
    const dataDir = tempDataDir('ap-keys-cli-');
    const journal = await Journal.open({ dataDir });
    await journal.appendBatch(runDrafts('run-a', 1));
    await journal.close();
    const saved = process.env.AGENTPLANE_DATABASE_URL;
    delete process.env.AGENTPLANE_DATABASE_URL;
    try {
      for (const args of [['keys'], ['retire-key', 'some-key']]) {
        const result = await cli(...args, '--data-dir', dataDir);
        expect(result.error).toMatch(/single-instance SQLite journal: its one key is its keyring/);
      }
    } finally {
      if (saved !== undefined) process.env.AGENTPLANE_DATABASE_URL = saved;
    }
  });

  it.skipIf(!postgresUrl())(`list the keyring, retire a key, and refuse what may not be retired${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, async () => {
    const url = await freshDatabase('keyscli');
    const password = new URL(url).password;
    const dirA = tempDataDir('ap-keys-a-');
    const dirB = tempDataDir('ap-keys-b-');
    const a = await Journal.open({ dataDir: dirA, databaseUrl: url });
    const b = await Journal.open({ dataDir: dirB, databaseUrl: url });
    await a.appendBatch(runDrafts('run-a', 1));
    await b.appendBatch(runDrafts('run-b', 1));
    const keyA = a.key.keyId;
    const keyB = b.key.keyId;
    await a.close();
    await b.close();

    const listed = await cli('keys', '--data-dir', dirA, '--database', url);
    expect(listed.error).toBeNull();
    expect(listed.lines).toHaveLength(2);
    expect(listed.lines[0]).toMatch(new RegExp(`^${keyA} \\(this data dir\\)  active  admitted at seq 1 \\(.+\\) by .+:${dirA}$`));
    expect(listed.lines[1]).toMatch(new RegExp(`^${keyB}  active  admitted at seq 2 `));
    const json = JSON.parse((await cli('keys', '--data-dir', dirA, '--database', url, '--json')).lines[0]!) as { keys: Array<{ keyId: string; own: boolean; retired: unknown }> };
    expect(json.keys.map((k) => [k.keyId, k.own, k.retired])).toEqual([
      [keyA, true, null],
      [keyB, false, null],
    ]);

    // Refusals: one line each, and nothing appended.
    const before = await headOf(url);
    const unknown = await cli('retire-key', 'no-such-key', '--data-dir', dirA, '--database', url);
    expect(unknown.error).toBe('key no-such-key was never admitted to this journal\'s keyring (agentplane journal keys lists it)');
    const own = await cli('retire-key', keyA, '--data-dir', dirA, '--database', url);
    expect(own.error).toMatch(new RegExp(`^key ${keyA} is this data dir's own signing key`));
    // A data dir whose key the journal has never seen is refused too, and not admitted by trying.
    const stranger = tempDataDir('ap-keys-c-');
    await loadOrCreatePlaneKey(stranger);
    expect((await cli('retire-key', 'no-such-key', '--data-dir', stranger, '--database', url)).error).toMatch(/never admitted/);
    expect(await headOf(url)).toBe(before);

    const retired = await cli('retire-key', keyB, '--reason', 'laptop lost', '--data-dir', dirA, '--database', url);
    expect(retired.error).toBeNull();
    expect(retired.lines[0]).toMatch(new RegExp(`^retired key ${keyB} at seq \\d+: `));
    const retiredSeq = Number(/at seq (\d+)/.exec(retired.lines[0]!)![1]);
    const body = JSON.parse((await sql(url, 'SELECT body FROM agentplane.records WHERE seq = $1', [retiredSeq])).rows[0].body as string) as Record<string, unknown>;
    expect(body).toMatchObject({ keyId: keyB, reason: 'laptop lost', by: expect.stringMatching(/^cli:/) });

    const again = await cli('retire-key', keyB, '--data-dir', dirA, '--database', url);
    expect(again.error).toMatch(new RegExp(`^key ${keyB} is already retired \\(seq ${retiredSeq}, .+, by cli:`));
    const after = await cli('keys', '--data-dir', dirA, '--database', url);
    expect(after.lines[1]).toMatch(new RegExp(`^${keyB}  retired at seq ${retiredSeq} \\(.+\\) by cli:.+: laptop lost  admitted at seq 2 `));

    const verified = await cli('verify', '--data-dir', dirA, '--database', url);
    expect(verified.lines[0]).toMatch(/^OK \d+ records, root [0-9a-f]{64}$/);
    expect(verified.lines).toContain(`keys: 2 signed (${[keyA, keyB].join(', ')})`);
    expect([...listed.lines, ...after.lines, ...verified.lines, unknown.error, own.error].join('\n')).not.toContain(password);
  });
});
