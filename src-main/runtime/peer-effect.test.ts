/**
 * A run calling a real peer process: the hop is journaled with the credential's kind and
 * audience (never the token), the answer is labelled peer:<id>, a stopped or revoked peer is
 * refused before anything is sent, and no byte the plane or the peer wrote holds the peer's
 * secret or any session token.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import type { Plane } from '../plane/plane';
import { call, testPlane } from '../../tests/support/runtime-support';
import { Mcpv2Client } from '../peers/peer-client';
import { mintSession } from '../peers/session-token';

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('cx.callPeer', () => {
  it('calls a running peer with a credential for it alone, and nothing secret is written anywhere', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-peer-call-');
    const plane = await testPlane({ dataDir, demoPeers: true });
    planes.push(plane);
    const stopped = await call(plane, 'runs.start', { agent: 'ask-peer', input: { query: 'anyone home?' }, wait: true });
    expect(stopped).toMatchObject({ outcome: 'failed', error: { code: 'PeerStopped' } });

    await call(plane, 'peers.start', { id: 'beta' });
    const run = await call(plane, 'runs.start', { agent: 'ask-peer', input: { query: 'What is the capital of Peru?' }, wait: true });
    expect(run.outcome).toBe('succeeded');
    expect(run.result).toMatchObject({ response: expect.stringContaining('What is the capital of Peru?') });
    const records = await plane.journal.readRun(run.runId, 1, 100);
    const started = records.find((r) => r.kind === 'EffectStarted')!;
    expect(started.body).toMatchObject({ effect: 'peer', name: 'beta/ask', credential: { kind: 'plane', audience: 'peer:beta' } });
    expect(records.find((r) => r.kind === 'EffectDone')!.body).toMatchObject({ provenance: 'peer:beta' });

    await call(plane, 'peers.revoke', { id: 'beta' });
    const revoked = await call(plane, 'runs.start', { agent: 'ask-peer', input: { query: 'still there?' }, wait: true });
    expect(revoked).toMatchObject({ outcome: 'failed', error: { code: 'PeerRevoked' } });
    await plane.close();

    const secret = readFileSync(join(dataDir, 'peers', 'beta', 'secret'), 'utf8').trim();
    const tokenShape = /[A-Za-z0-9_-]{16,}\.[0-9a-f]{64}/;
    for (const file of filesUnder(dataDir)) {
      if (file.endsWith(join('beta', 'secret'))) continue;
      const bytes = readFileSync(file);
      expect(bytes.includes(Buffer.from(secret)), `the secret is in ${file}`).toBe(false);
      if (file.endsWith('.sqlite') || file.endsWith('.sqlite-wal') || file.endsWith('.jsonl') || file.endsWith('.log')) {
        expect(tokenShape.test(bytes.toString('latin1')), `a session token is in ${file}`).toBe(false);
      }
    }
  });

  it('links the peer call to the skill run it admitted on the peer, both ways, and confirms only what the caller journaled', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-peer-links-');
    const plane = await testPlane({ dataDir, demoPeers: true });
    planes.push(plane);
    await call(plane, 'peers.start', { id: 'beta' });
    const run = await call(plane, 'runs.start', { agent: 'ask-peer', input: { query: 'Who called?' }, wait: true });
    expect(run.outcome).toBe('succeeded');
    const started = (await plane.journal.readRun(run.runId, 1, 100)).find((r) => r.kind === 'EffectStarted' && r.body.effect === 'peer')!;
    const step = started.body.step as number;

    // Caller → callee: the run's page lists the skill run its step admitted on beta.
    const links = await call(plane, 'runs.links', { runId: run.runId });
    expect(links.calledBy).toBeNull();
    expect(links.calls).toHaveLength(1);
    const callee = links.calls[0]!;
    expect(callee).toMatchObject({ agent: 'skill:ask', host: 'peer:beta', step, confirmed: true, status: 'sealed', outcome: 'succeeded' });
    const admitted = (await plane.journal.readRun(callee.runId, 1, 1))[0]!;
    expect(admitted.body).toMatchObject({ parentRunId: run.runId, parentStep: step });

    // Callee → caller: and back.
    const back = await call(plane, 'runs.links', { runId: callee.runId });
    expect(back.calls).toEqual([]);
    expect(back.calledBy).toMatchObject({ runId: run.runId, agent: 'ask-peer', host: 'plane', step, confirmed: true, outcome: 'succeeded' });

    // Anyone holding a session may name a caller; a run that made no such call is not confirmed.
    const beta = (await call(plane, 'peers.list', {})).peers.find((p) => p.id === 'beta')!;
    const secret = readFileSync(join(dataDir, 'peers', 'beta', 'secret'), 'utf8').trim();
    const client = new Mcpv2Client({ host: '127.0.0.1', port: beta.port, sessionId: null }, 10_000);
    const auth = { sessionId: mintSession({ secret, clientIp: '127.0.0.1', ttlSeconds: 60 }).sessionId };
    await client.callTool('ask', { query: 'claiming a parent' }, { auth }, { caller: { runId: run.runId, step: step + 7 } });
    const claimed = (await call(plane, 'runs.links', { runId: run.runId })).calls;
    expect(claimed).toHaveLength(2);
    expect(claimed[1]).toMatchObject({ agent: 'skill:ask', host: 'peer:beta', step: step + 7, confirmed: false });
    const forged = await call(plane, 'runs.links', { runId: claimed[1]!.runId });
    expect(forged.calledBy).toMatchObject({ runId: run.runId, confirmed: false });

    // A malformed caller is refused by name, and nothing is admitted for it.
    const head = (await plane.journal.head()).seq;
    await expect(client.callTool('ask', { query: 'x' }, { auth }, { caller: { runId: 'not-a-run', step: -1 } })).rejects.toThrow(/context\.caller must be/);
    await expect(client.callTool('ask', { query: 'x' }, { auth }, { caller: 'run-00000000000000000000' })).rejects.toThrow(/context\.caller must be/);
    expect((await plane.journal.head()).seq).toBe(head);
  });
});
