/**
 * `agentplane sealing|holds|erase|retention` as a person runs them: the CLI as a real process
 * (its TypeScript entry through tsx), opening the data dir in-process since no plane runs there.
 * Bad input is refused naming what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { runCliFromSource } from '../../tests/support/cli-from-source';

describe('agentplane erasure commands', () => {
  it('turns sealing on, holds and lifts, refuses bad days and an unknown subject, sets and applies retention', { timeout: 120_000 }, async () => {
    const d = ['--data-dir', tempDataDir('ap-erasure-cli-')];
    const json = async (args: string[]) => {
      const run = await runCliFromSource([...args, '--json', ...d]);
      return { code: run.code, out: JSON.parse(run.stdout) as { ok: boolean; result?: Record<string, unknown>; error?: { code: string; message: string } } };
    };
    expect((await json(['sealing', 'on'])).out.result).toEqual({ sealPayloads: true, retentionDays: null });
    const held = await json(['holds', 'add', '--subject', 'user:alice', '--reason', 'litigation']);
    expect(held.out.result).toMatchObject({ target: { kind: 'subject', id: 'user:alice' }, reason: 'litigation' });
    const both = await json(['holds', 'add', '--subject', 'user:alice', '--case', 'm-1']);
    expect(both.out.error).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/exactly one of --subject/) });
    expect((await json(['holds', 'remove', '--subject', 'user:alice'])).out.result).toMatchObject({ removed: [{ target: { id: 'user:alice' } }] });
    const unknown = await json(['erase', '--subject', 'user:nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.out.error).toMatchObject({ code: 'AP_NOT_FOUND', message: expect.stringMatching(/no payload of subject "user:nobody"/) });
    const zero = await json(['retention', 'set', '--days', '0']);
    expect(zero.out.error).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/--days 0 is refused: retention is at least 1 day/) });
    expect((await json(['retention', 'set', '--days', '30'])).out.result).toMatchObject({ retentionDays: 30 });
    expect((await json(['retention', 'apply'])).out.result).toEqual({ days: 30, erased: [], held: [] });
  });
});
