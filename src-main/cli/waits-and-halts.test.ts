/**
 * What the CLI tells a person about a run that waits and a halt that refuses, as a newcomer met
 * them: the CLI as a real process (its TypeScript entry through tsx, no build needed), opening
 * the data dir in-process since no plane runs there, with the bundled agents on the keyless
 * local model.
 *
 * - `run --wait` that leaves the run waiting for a person exits 3 (neither 0, done, nor 1,
 *   failed), says the command that decides it, and under --json is still `{ok: true}`;
 * - `approvals deny` prints the run as the deny left it: denied, not running;
 * - a run a halt refuses says which halt and how to lift it; `halt --lift` says what it lifted.
 */
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { runCliFromSource } from '../../tests/support/cli-from-source';

const RUN_LINE = /^(run-[0-9a-f]{20}) +(\S+) +(.+?) +effects /m;

/** Starts a write-note run, which waits for approval before it writes; answers its id. */
async function waitingRun(d: string[]): Promise<{ runId: string; stdout: string; code: number | null }> {
  const ran = await runCliFromSource(['run', 'write-note', '--input', '{"title":"waits","topic":"foxes"}', '--wait', ...d]);
  expect(ran.stderr).toBe('');
  const runId = RUN_LINE.exec(ran.stdout)?.[1];
  expect(runId, ran.stdout).toBeDefined();
  expect(ran.stdout).toContain('waiting: approval');
  return { runId: runId!, stdout: ran.stdout, code: ran.code };
}

describe('a run left waiting for a person', () => {
  it('run --wait exits 3 and prints the command that approves it; under --json it is still ok', { timeout: 120_000 }, async () => {
    const dataDir = tempDataDir('ap-cli-waits-');
    const d = ['--data-dir', dataDir];
    const ran = await waitingRun(d);
    expect(ran.stdout).toContain(`approve with: agentplane approvals approve ${ran.runId} --data-dir ${dataDir}`);
    expect(ran.code).toBe(3);

    const json = await runCliFromSource(['run', 'write-note', '--input', '{"title":"json","topic":"foxes"}', '--wait', '--json', ...d]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, result: { status: 'suspended', pending: { reason: 'approval' } } });
    expect(json.code).toBe(3);
  });

  it('approvals deny prints the run as the deny left it: denied', { timeout: 120_000 }, async () => {
    const d = ['--data-dir', tempDataDir('ap-cli-deny-')];
    const { runId } = await waitingRun(d);
    const denied = await runCliFromSource(['approvals', 'deny', runId, '--reason', 'not now', ...d]);
    expect(denied.code, denied.stderr).toBe(0);
    expect(RUN_LINE.exec(denied.stdout)?.[3]).toBe('denied');
    const shown = await runCliFromSource(['runs', 'show', runId, ...d]);
    expect(RUN_LINE.exec(shown.stdout)?.[3]).toBe('denied');
  });
});

describe('halts', () => {
  it('a run a halt refuses names the halt and how to lift it', { timeout: 120_000 }, async () => {
    const dataDir = tempDataDir('ap-cli-halts-');
    const d = ['--data-dir', dataDir];
    expect((await runCliFromSource(['halt', '--scope', 'agent:summarize', '--reason', 'drill', ...d])).code).toBe(0);
    const refused = await runCliFromSource(['run', 'summarize', '--input', '{"text":"Foxes are quick."}', ...d]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`agentplane: the plane refused to start this run: the halt agent:summarize withholds it; lift it with \`agentplane halt --lift agent:summarize --data-dir ${dataDir}\``);
  });

  it('halt --scope and halt --lift say what they did, then what is in force', { timeout: 120_000 }, async () => {
    const d = ['--data-dir', tempDataDir('ap-cli-lift-')];
    const halted = await runCliFromSource(['halt', '--scope', 'agent:summarize', '--reason', 'drill', ...d]);
    expect(halted.code, halted.stderr).toBe(0);
    const lifted = await runCliFromSource(['halt', '--lift', 'agent:summarize', ...d]);
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(lifted.stdout.split('\n')[0]).toMatch(/^lifted the halt agent:summarize/);
    expect(lifted.stdout).toContain('no halts are in force now');
    expect(halted.stdout).toMatch(/^halted agent:summarize: .*; lift it with agentplane halt --lift agent:summarize$/m);
    expect(halted.stdout).toContain('halts in force now: agent:summarize');

    // Lifted: the agent's runs start again.
    const ran = await runCliFromSource(['run', 'summarize', '--input', '{"text":"Foxes are quick."}', '--wait', ...d]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(RUN_LINE.exec(ran.stdout)?.[3]).toBe('succeeded');
  });
});
