/**
 * The checkpoint verifier is node:crypto's Ed25519 over the one compact-JWS form signCheckpoint
 * writes (checkpoints.ts). jose, a standard JWS verifier, is the reference it is held to: both
 * accept what the plane signs and refuse every forgery below, and where ours is stricter (a
 * header asking for an extension, a signature spelt another way) it refuses what jose would take.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import { CHECKPOINT_FORMAT, signCheckpoint, verifyCheckpoint } from './checkpoints';
import { sha256Hex } from './merkle';
import { keyIdOf } from './plane-key';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64url');

async function planeKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicJwk = publicKey.export({ format: 'jwk' });
  return { privateKey, publicKey, publicJwk, keyId: await keyIdOf(publicJwk as Parameters<typeof keyIdOf>[0]) };
}

/** A JWS over any header and payload, signed with the key's Ed25519 as the plane signs. */
function signed(privateKey: KeyObject, header: unknown, payload: string): string {
  const input = `${b64(JSON.stringify(header))}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input, 'ascii'), privateKey).toString('base64url')}`;
}

async function joseAccepts(jws: string, key: KeyObject): Promise<boolean> {
  try {
    await compactVerify(jws, key, { algorithms: ['EdDSA'] });
    return true;
  } catch {
    return false;
  }
}

/** Whether our verifier took the signature (a payload that is not a checkpoint fails later, for its own reason). */
async function oursAccepts(jws: string, key: KeyObject): Promise<boolean> {
  const check = await verifyCheckpoint(jws, key);
  return check.ok || !/signature does not verify/.test(check.reason);
}

describe('verifyCheckpoint', () => {
  it('agrees with jose on what the plane signs and on every forgery', async () => {
    const key = await planeKey();
    const other = await planeKey();
    const fields = { journalId: 'j-1', treeSize: 7, rootHash: sha256Hex('root'), time: '2026-12-02T00:00:00.000Z' };
    const good = signCheckpoint(key as Parameters<typeof signCheckpoint>[0], fields);
    const [h, p, s] = good.jws.split('.') as [string, string, string];
    const otherPayload = b64(canonicalize({ ...good.checkpoint, treeSize: 8 }));
    const flipped = `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    const cases: Array<[string, string, boolean]> = [
      ['what the plane signs', good.jws, true],
      ['its payload altered', `${h}.${otherPayload}.${s}`, false],
      ['its signature altered', `${h}.${p}.${flipped}`, false],
      ['signed by another key', signCheckpoint(other as Parameters<typeof signCheckpoint>[0], fields).jws, false],
      ['alg none, no signature', `${b64('{"alg":"none"}')}.${p}.`, false],
      ['alg HS256 keyed with the public key', (() => {
        const input = `${b64('{"alg":"HS256"}')}.${p}`;
        return `${input}.${createHmac('sha256', JSON.stringify(key.publicJwk)).update(input).digest('base64url')}`;
      })(), false],
      ['a header that is not JSON', `${b64('alg EdDSA')}.${p}.${s}`, false],
      ['a header that is an array', signed(key.privateKey, ['EdDSA'], Buffer.from(p, 'base64url').toString()), false],
      ['a header asking for an extension it cannot know', signed(key.privateKey, { alg: 'EdDSA', crit: ['exp'], exp: 1 }, Buffer.from(p, 'base64url').toString()), false],
      ['four parts', `${good.jws}.${s}`, false],
      ['two parts', `${h}.${p}`, false],
      ['an empty string', '', false],
    ];
    for (const [what, jws, accepted] of cases) {
      expect(await joseAccepts(jws, key.publicKey), `jose: ${what}`).toBe(accepted);
      expect(await oursAccepts(jws, key.publicKey), `ours: ${what}`).toBe(accepted);
    }
    // A key of another type is refused by both.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(await joseAccepts(good.jws, rsa)).toBe(false);
    expect(await oursAccepts(good.jws, rsa)).toBe(false);
    expect(await verifyCheckpoint(good.jws, key.publicKey)).toEqual({ ok: true, checkpoint: good.checkpoint });
    expect(good.checkpoint.format).toBe(CHECKPOINT_FORMAT);
  });

  it('is stricter than jose where a checkpoint could be spelt two ways: a padded signature, a b64 extension', async () => {
    const key = await planeKey();
    const good = signCheckpoint(key as Parameters<typeof signCheckpoint>[0], { journalId: 'j-1', treeSize: 1, rootHash: sha256Hex('r'), time: 't' });
    const padded = `${good.jws}==`;
    expect(await joseAccepts(padded, key.publicKey)).toBe(true);
    expect(await oursAccepts(padded, key.publicKey)).toBe(false);
    const payload = Buffer.from(good.jws.split('.')[1]!, 'base64url').toString();
    const unencoded = signed(key.privateKey, { alg: 'EdDSA', b64: true, crit: ['b64'] }, payload);
    expect(await joseAccepts(unencoded, key.publicKey)).toBe(true);
    expect(await oursAccepts(unencoded, key.publicKey)).toBe(false);
    // Both are signatures over the plane's key: only the spelling is refused.
    expect(await oursAccepts(good.jws, key.publicKey)).toBe(true);
  });

  it('names a payload that verifies but is not a checkpoint', async () => {
    const key = await planeKey();
    expect(await verifyCheckpoint(signed(key.privateKey, { alg: 'EdDSA' }, '{"hello":1}'), key.publicKey)).toEqual({ ok: false, reason: 'its payload is not an AgentPlane checkpoint' });
    expect(await verifyCheckpoint(signed(key.privateKey, { alg: 'EdDSA' }, 'not json'), key.publicKey)).toEqual({ ok: false, reason: 'its payload is not JSON' });
  });
});
