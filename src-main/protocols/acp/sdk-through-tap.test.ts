/**
 * The official SDK on both sides of the tap: the demo editor (an SDK client) starts
 * `agentplane acp tap` (the CLI, from source) with the demo agent (an SDK agent) behind it, and
 * a recorder (tests/doubles/stdio-recorder.mjs) between the tap and the agent keeps exactly what
 * the agent received and sent. Every byte the editor sent reaches the agent and every byte the
 * agent sent reaches the editor, unchanged; the journal holds every message, in wire order, as
 * it was on the wire, in one observed run that is sealed and verifies.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../tests/helpers/acp-tap-process';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { Journal } from '../../journal/journal';
import { demoAgentCommand } from './demo/demo-agent-command';
import { runDemoClient } from './demo/demo-client';
import { verifyJournalStore } from '../../journal/journal-workers';

const tempDir = useTempFolders('agentplane-acp-sdk-tap-');
const CLI_SOURCE = join(REPO_ROOT, 'src-main', 'cli', 'main.ts');
const RECORDER = join(REPO_ROOT, 'tests', 'doubles', 'stdio-recorder.mjs');

describe('the SDK client and the SDK agent through the tap', () => {
  it('passes every byte both ways unchanged and journals every message in order', { timeout: 90_000 }, async () => {
    const dataDir = tempDir();
    const workspace = tempDir();
    const agentIn = join(tempDir(), 'agent-in');
    const agentOut = join(tempDir(), 'agent-out');
    const editorSent: string[] = [];
    const editorGot: string[] = [];
    const tap = [process.execPath, '--import', 'tsx', CLI_SOURCE, 'acp', 'tap', '--name', 'sdk-demo', '--data-dir', dataDir, '--', process.execPath, RECORDER, '--in', agentIn, '--out', agentOut, '--', ...demoAgentCommand()];
    const result = await runDemoClient({
      command: tap,
      cwd: workspace,
      permission: 'allow',
      log: () => undefined,
      onWire: (direction, line) => (direction === 'to-agent' ? editorSent : editorGot).push(line),
    });
    expect(result.stopReason).toBe('end_turn');
    expect(editorSent.length).toBeGreaterThan(5);
    expect(editorGot.length).toBeGreaterThan(20);

    // Unchanged, byte for byte, both ways.
    expect(readFileSync(agentIn, 'utf8')).toBe(editorSent.map((l) => `${l}\n`).join(''));
    expect(readFileSync(agentOut, 'utf8')).toBe(editorGot.map((l) => `${l}\n`).join(''));

    const journal = await Journal.open({ dataDir });
    try {
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true });
      const records = await journal.readRange(1, null, 100_000);
      const runIds = [...new Set(records.filter((r) => r.kind === 'Observation').map((r) => r.runId))];
      expect(runIds).toHaveLength(1);
      const run = records.filter((r) => r.runId === runIds[0]);
      expect(run[0]).toMatchObject({ kind: 'Observation', body: { source: 'acp', update: 'tap/started', detail: { tapName: 'sdk-demo', policy: 'observe' } } });
      expect(run.at(-2)).toMatchObject({ kind: 'Observation', body: { update: 'tap/ended', detail: { reason: 'editor-disconnect' } } });
      expect(run.at(-1)).toMatchObject({ kind: 'RunSealed', body: { outcome: 'observed', records: run.length - 1 } });
      const messages = run.filter((r) => r.body.update === 'message').map((r) => r.body.detail as { dir: string; wire: number; message: unknown });
      // Every message, in the order the tap saw it, as it was (the demo's are under every cap).
      expect(messages.map((m) => m.wire)).toEqual([...messages.keys()].map((i) => i + 1));
      expect(messages.filter((m) => m.dir === 'toAgent').map((m) => m.message)).toEqual(editorSent.map((l) => JSON.parse(l) as unknown));
      expect(messages.filter((m) => m.dir === 'toEditor').map((m) => m.message)).toEqual(editorGot.map((l) => JSON.parse(l) as unknown));
      expect(messages).toHaveLength(editorSent.length + editorGot.length);
    } finally {
      await journal.close();
    }

    // The same session from the CLI: listed, and shown as a person reads it.
    const cli = (...args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', CLI_SOURCE, 'acp', ...args, '--data-dir', dataDir], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' } });
    const listed = JSON.parse(cli('sessions', '--json')) as { ok: boolean; result: { sessions: Array<{ runId: string; tapName: string; state: string; counts: { prompts: number; permissions: number } }> } };
    expect(listed).toMatchObject({ ok: true, result: { sessions: [{ tapName: 'sdk-demo', state: 'ended', counts: { prompts: 1, permissions: 1 } }] } });
    const shown = cli('show', listed.result.sessions[0]!.runId);
    expect(shown).toContain('editor AgentPlane demo client');
    expect(shown).toMatch(/you: Make the greeting in greeting\.ts friendlier/);
    expect(shown).toMatch(/permission for Edit greeting\.ts \[allow_once, allow_always, reject_once\]: editor selected allow_once/);
    expect(shown).toContain('turn ended: end_turn');
    expect(() => cli('show', 'run-nope')).toThrow(/no editor session run-nope/);
  });
});
