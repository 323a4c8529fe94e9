/**
 * A credential never reaches the journal: a real flow (an HTTP peer on loopback that demands
 * the bearer token and, on refusal, echoes it back in its error body, as careless servers do)
 * is journaled end to end, exported, logged, and then every byte the plane wrote is scanned
 * for the secret.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import { exportBundle } from '../journal/bundle-export';
import { Journal } from '../journal/journal';
import { sha256Hex } from '../journal/sqlite-store';
import { tempDataDir, ZERO_SPEND } from '../../tests/support/journal-support';
import { createLogger, errorFields } from '../base/logger';
import { CredentialAudienceError, PeerCredential } from './peer-credential';

const SECRET = 'sk-live-7f3a9c1e2b8d4f6a0c5e7b9d1f3a5c7e';
const peer = Fastify();
let peerUrl = '';

beforeAll(async () => {
  peer.post('/call', async (request, reply) => {
    const auth = request.headers.authorization ?? '';
    if (auth !== `Bearer ${SECRET}`) return reply.code(401).send({ error: `bad token: ${auth}` });
    return { ok: true, answer: 42 };
  });
  peerUrl = await peer.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => peer.close());

/** One journaled peer call, the way the runtime performs a hop (EffectStarted, then Done or Failed). */
async function journaledCall(journal: Journal, runId: string, step: number, credential: PeerCredential, presentAs: string) {
  const key = sha256Hex(canonicalize({ destination: `${peerUrl}/call`, step }));
  await journal.append({
    runId,
    kind: 'EffectStarted',
    body: {
      step,
      effect: 'peer',
      name: 'call',
      key,
      request: { q: 'answer?' },
      destination: `${peerUrl}/call`,
      credential: { kind: 'unbound', audience: credential.audience },
    },
  });
  try {
    const token = credential.presentTo(presentAs);
    const response = await fetch(`${peerUrl}/call`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    const body = (await response.json()) as Record<string, unknown>;
    if (!response.ok) {
      // The error body echoes the token; what is journaled is the status, never the body.
      await journal.append({ runId, kind: 'EffectFailed', body: { step, key, disposition: 'Landed', error: { code: 'PeerRefused', message: `peer refused the call (HTTP ${response.status})` }, spend: ZERO_SPEND } });
      return;
    }
    await journal.append({ runId, kind: 'EffectDone', body: { step, key, result: body, spend: { ...ZERO_SPEND, effects: 1 }, provenance: 'peer:reviewer' } });
  } catch (error) {
    await journal.append({ runId, kind: 'EffectFailed', body: { step, key, disposition: 'DidNotHappen', error: { code: 'PeerUnreachable', message: (error as Error).message }, spend: ZERO_SPEND } });
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('PeerCredential', () => {
  it('has no JSON form and redacts itself everywhere it could be printed', () => {
    const credential = new PeerCredential('peer:reviewer', SECRET);
    expect(() => JSON.stringify({ credential })).toThrow(/has no JSON form \(audience peer:reviewer\)/);
    expect(() => canonicalize({ credential })).toThrow(/cannot canonicalize \$\.credential/);
    for (const shown of [String(credential), `${credential}`, inspect(credential), inspect({ nested: { credential } }, { depth: 5 })]) {
      expect(shown).toContain('peer:reviewer');
      expect(shown).not.toContain(SECRET);
    }
    expect(Object.keys(credential)).not.toContain('secret');
    expect(JSON.stringify(structuredClone({ ...credential }))).not.toContain(SECRET);
  });

  it('is presented only to its own audience', () => {
    const credential = new PeerCredential('peer:B', SECRET);
    expect(credential.presentTo('peer:B')).toBe(SECRET);
    expect(() => credential.presentTo('peer:A')).toThrow(CredentialAudienceError);
    expect(() => credential.presentTo('peer:A')).toThrow('a credential for peer:B cannot be presented to peer:A');
    const expired = new PeerCredential('peer:B', SECRET, 'plane', 1000);
    expect(() => expired.presentTo('peer:B', 1000)).toThrow(/expired/);
  });

  it('never reaches any byte the plane writes, through successful, refused and misdirected calls', async () => {
    const dataDir = tempDataDir('ap-cred-');
    const logger = createLogger(join(dataDir, 'plane.log'), () => undefined);
    const journal = await Journal.open({ dataDir, checkpointEvery: 2 });
    const good = new PeerCredential('peer:reviewer', SECRET);
    const wrongSecret = new PeerCredential('peer:reviewer', `${SECRET}-stale`);

    await journaledCall(journal, 'run-1', 0, good, 'peer:reviewer'); // succeeds
    await journaledCall(journal, 'run-1', 1, wrongSecret, 'peer:reviewer'); // 401 echoing the token
    await journaledCall(journal, 'run-1', 2, good, 'peer:other'); // refused before sending
    // Attempts to write the credential itself are refused, and nothing is written.
    const before = (await journal.head()).seq;
    await expect(journal.append({ runId: 'run-1', kind: 'EffectDone', body: { step: 3, key: 'a'.repeat(64), result: { credential: good }, spend: ZERO_SPEND, provenance: 'plane' } })).rejects.toThrow(
      /cannot canonicalize/,
    );
    expect((await journal.head()).seq).toBe(before);
    logger.log('error', `call failed with ${String(good)}`, { credential: String(good), ...errorFields(new Error(`refused ${good}`)) });
    await exportBundle(journal, { kind: 'full' }, join(dataDir, 'export.jsonl'));
    await journal.close();

    const records = (await Journal.open({ dataDir, readOnly: true }).then(async (j) => {
      const rows = await j.readRange(1, null, 100);
      await j.close();
      return rows;
    })) as Array<{ kind: string; body: Record<string, unknown> }>;
    expect(records.map((r) => r.kind)).toEqual(['EffectStarted', 'EffectDone', 'EffectStarted', 'EffectFailed', 'EffectStarted', 'EffectFailed']);
    expect(records[0]!.body.credential).toEqual({ kind: 'unbound', audience: 'peer:reviewer' });

    const needles = [SECRET, Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET).toString('hex'), SECRET.slice(8, 32)];
    const files = filesUnder(dataDir);
    expect(files.some((f) => f.endsWith('journal.sqlite'))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const needle of needles) {
        expect(bytes.includes(Buffer.from(needle)), `${needle.slice(0, 6)}… found in ${file}`).toBe(false);
      }
    }
  });
});
