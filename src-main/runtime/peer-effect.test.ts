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
});
