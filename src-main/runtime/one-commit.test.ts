/**
 * One durable commit per call (docs/PERFORMANCE.md): a run whose effects are all local (a clock read, a
 * file listing, a template) commits its admission, its effects and its seal in ONE transaction,
 * made before its caller is answered; concurrent calls share commits; and a run with an outside
 * effect still makes that effect's start durable before performing it, with everything held
 * before it in the same commit (docs/DESIGN.md, "Effect").
 *
 * A commit is observed as the journal sees it: each `onAppend` notification is one committed
 * transaction, with the records it made durable.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src-shared/journal/records';
import { startTestPeer, type TestPeer } from '../../tests/support/peer-support';
import { agent, testPlane } from '../../tests/support/runtime-support';
import type { Journal } from '../journal/journal';
import type { Plane } from '../plane/plane';
import { loadAgents } from '../plane/plane-config';
import { tempDataDir } from '../../tests/support/journal-support';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close().catch(() => undefined);
});

function commitsOf(journal: Journal): JournalRecord[][] {
  const commits: JournalRecord[][] = [];
  journal.onAppend((records) => commits.push([...records]));
  return commits;
}

async function peer(): Promise<TestPeer> {
  const p = await startTestPeer('one-commit', { secret: 's'.repeat(32), ratePerSecond: 10_000 });
  open.push(p);
  return p;
}

async function callSkill(p: TestPeer, name: string, args: Record<string, unknown>): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const response = await fetch(`http://127.0.0.1:${p.peer.port}/mcpv2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.session()}` },
    body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }]),
  });
  expect(response.status).toBe(200);
  const [slot] = (await response.json()) as Array<{ result?: unknown; error?: { code: number; message: string } }>;
  return slot!;
}

describe('a run of local effects is one commit', () => {
  it('a peer ping: admission, the clock read and the seal in one transaction, committed before the answer', async () => {
    const p = await peer();
    const commits = commitsOf(p.peer.journal);
    const answer = await callSkill(p, 'ping', {});
    expect(answer.result).toMatchObject({ pong: true });
    // Answered only after the commit: the run is in the journal when the answer arrives.
    expect(commits).toHaveLength(1);
    expect(commits[0]!.map((r) => r.kind)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectDone', 'RunSealed']);
    const runId = commits[0]![0]!.runId!;
    expect(new Set(commits[0]!.map((r) => r.runId))).toEqual(new Set([runId]));
    // The time the answer carries is the journaled clock read, and the seal counts the records before it.
    expect((answer.result as { time: string }).time).toBe((commits[0]![2]!.body as { result: string }).result);
    expect(commits[0]![3]!.body).toMatchObject({ outcome: 'succeeded', records: 3 });
    const history = await p.peer.runtime.history(runId);
    expect(history).toMatchObject({ status: 'sealed', outcome: 'succeeded', agent: 'skill:ping' });
  });

  it('a file listing and a failing read are one commit each (a local effect that fails commits its start with its failure)', async () => {
    const p = await peer();
    const commits = commitsOf(p.peer.journal);
    expect((await callSkill(p, 'list_files', {})).result).toMatchObject({ files: [] });
    expect(commits).toHaveLength(1);
    expect(commits[0]!.map((r) => r.kind)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectDone', 'RunSealed']);
    const missing = await callSkill(p, 'process_instructions', { filename: 'nope.txt', instructions: 'summarise' });
    expect(missing.error).toBeDefined();
    expect(commits).toHaveLength(2);
    expect(commits[1]!.map((r) => r.kind)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectFailed', 'RunSealed']);
  });

  it('concurrent calls share commits: 16 runs at once, each whole in one commit, fewer commits than runs', async () => {
    const p = await peer();
    // The principal a session holder calls as, from one call over the wire.
    const commits = commitsOf(p.peer.journal);
    await callSkill(p, 'ping', {});
    const admitted = commits.splice(0)[0]![0]!.body as { chain: string[]; input: unknown };
    // Sixteen callers at once, in-process, so their runs reach the journal in the same turn: the
    // journal's group commit writes them together (over HTTP, calls that arrive while a commit's
    // fsync holds the thread are read in one turn and share the next one the same way).
    const runs = await Promise.all(Array.from({ length: 16 }, () => p.peer.runtime.run({ agent: 'skill:ping', input: admitted.input, chain: admitted.chain, via: 'peer' })));
    expect(runs.every((run) => run.outcome === 'succeeded')).toBe(true);
    const seenIn = new Map<string, number>();
    commits.forEach((records, index) => {
      for (const record of records) {
        // Every record of a run is in the same commit as its admission.
        if (seenIn.has(record.runId!)) expect(seenIn.get(record.runId!)).toBe(index);
        seenIn.set(record.runId!, index);
      }
    });
    expect(seenIn.size).toBe(16);
    expect(commits.length).toBeLessThan(16);
  });
});

describe('a run with an outside effect', () => {
  const planes: Plane[] = [];
  afterEach(async () => {
    for (const p of planes.splice(0)) await p.close().catch(() => undefined);
  });

  it('commits the admission and the held clock read with the outside effect\'s start, before performing it', async () => {
    const dir = tempDataDir();
    // A clock read (local), then a model call (outside: a provider), through `runs.start` with wait.
    const stamped = agent({
      name: 'stamped',
      input: { type: 'object', properties: { text: { type: 'string' } } },
      steps: [{ model: { provider: 'local', prompt: 'say {{input.text}}' } }],
      grants: [{ kind: 'model', name: 'local' }],
    });
    const p = await testPlane({ dataDir: dir, agents: [...loadAgents(dir), stamped] });
    planes.push(p);
    const commits = commitsOf(p.journal);
    const run = await p.runtime.run({ agent: 'stamped', input: { text: 'hi' }, chain: ['user:local'], via: 'cli' });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    // The model's start is durable on its own commit, with the admission before it; its answer
    // and the seal after the call.
    expect(commits.map((c) => c.map((r) => r.kind))).toEqual([['RunAdmitted', 'EffectStarted'], ['EffectDone'], ['RunSealed']]);
  });

  it('a run that waits for a person commits its admission with the wait, and is found by id once answered to the caller', async () => {
    const dir = tempDataDir();
    const asks = agent({ name: 'asks', input: { type: 'object' }, steps: [{ input: { prompt: 'which?' } }], grants: [] });
    const p = await testPlane({ dataDir: dir, agents: [...loadAgents(dir), asks] });
    planes.push(p);
    const commits = commitsOf(p.journal);
    const run = await p.runtime.run({ agent: 'asks', input: {}, chain: ['user:local'], via: 'cli' });
    expect(run.status).toBe('suspended');
    expect(commits.map((c) => c.map((r) => r.kind))).toEqual([['RunAdmitted', 'Suspended']]);
    expect((await p.runtime.history(run.runId)).pending?.reason).toBe('input');
  });

  it('a result the journal cannot hold fails the call and leaves nothing half-written', async () => {
    const p = await peer();
    const before = (await p.peer.journal.head()).seq;
    // A lone surrogate cannot be journaled: refused at admission, as an append would refuse it.
    const refused = await callSkill(p, 'ping', { note: '\uD800' });
    expect(refused.error).toBeDefined();
    expect((await p.peer.journal.head()).seq).toBe(before);
  });
});
