import { describe, expect, it } from 'vitest';
import { base64url, type JWK } from 'jose';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { loadOrCreatePlaneKey } from '../../journal/plane-key';
import { tempDataDir } from '../../../tests/support/journal-support';
import { signAgentCard, verifyAgentCard, type SignableCard } from './card-signature';

const card: SignableCard = {
  name: 'echo',
  description: 'Echoes its input.',
  version: '1.0.0',
  supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a/echo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills: [{ id: 'echo', name: 'echo', description: 'Echoes its input.', tags: ['echo'] }],
};

describe('agent card signatures', () => {
  it('signs a card and verifies it, with the embedded key and with that key pinned', async () => {
    const key = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const signed = await signAgentCard(card, key);
    expect(signed.signatures).toHaveLength(1);
    const header = JSON.parse(new TextDecoder().decode(base64url.decode(signed.signatures[0]!.protected))) as Record<string, unknown>;
    expect(header).toMatchObject({ alg: 'EdDSA', kid: key.keyId, jwk: { kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x } });
    expect(header.jwk).not.toHaveProperty('d');
    const result = await verifyAgentCard(signed);
    expect(result).toEqual({ ok: true, keyId: key.keyId, jwk: { kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x } });
    expect(await verifyAgentCard(signed, key.publicJwk)).toMatchObject({ ok: true, keyId: key.keyId });
  });

  it('is verified by @a2a-js/sdk verifyAgentCardSignature too (same canonical bytes)', async () => {
    const key = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const signed = await signAgentCard(card, key);
    const verifier = verifyAgentCardSignature(async () => key.publicKey);
    await expect(verifier(signed as never)).resolves.toBeUndefined();
  });

  it('refuses a card changed after signing', async () => {
    const key = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const signed = await signAgentCard(card, key);
    const changed = { ...signed, description: 'Sends money.' };
    expect(await verifyAgentCard(changed)).toMatchObject({ ok: false, reason: 'bad-signature' });
    const urlChanged = { ...signed, supportedInterfaces: [{ url: 'http://10.0.0.1/a2a/echo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] };
    expect(await verifyAgentCard(urlChanged)).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('refuses an unsigned card', async () => {
    expect(await verifyAgentCard(card)).toMatchObject({ ok: false, reason: 'unsigned' });
    expect(await verifyAgentCard({ ...card, signatures: [] })).toMatchObject({ ok: false, reason: 'unsigned' });
  });

  it('refuses a card signed by a key other than the pinned one', async () => {
    const key = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const other = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const signed = await signAgentCard(card, other);
    expect(await verifyAgentCard(signed, key.publicJwk)).toMatchObject({ ok: false, reason: 'key-mismatch' });
  });

  it('refuses a swapped embedded key (signature by one key, jwk of another)', async () => {
    const key = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const other = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const signed = await signAgentCard(card, key);
    const header = JSON.parse(new TextDecoder().decode(base64url.decode(signed.signatures[0]!.protected))) as Record<string, unknown>;
    const forged = base64url.encode(JSON.stringify({ ...header, jwk: { kty: 'OKP', crv: 'Ed25519', x: other.publicJwk.x }, kid: other.keyId }));
    const result = await verifyAgentCard({ ...signed, signatures: [{ ...signed.signatures[0]!, protected: forged }] });
    expect(result).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('refuses an unsupported alg and a malformed entry', async () => {
    const key = await loadOrCreatePlaneKey(tempDataDir('ap-card-'));
    const signed = await signAgentCard(card, key);
    const hs = base64url.encode(JSON.stringify({ alg: 'HS256', kid: key.keyId }));
    expect(await verifyAgentCard({ ...signed, signatures: [{ protected: hs, signature: signed.signatures[0]!.signature }] })).toMatchObject({
      ok: false,
      reason: 'unsupported-alg',
    });
    const none = base64url.encode(JSON.stringify({ alg: 'none' }));
    expect(await verifyAgentCard({ ...signed, signatures: [{ protected: none, signature: '' }] }, key.publicJwk as JWK)).toMatchObject({
      ok: false,
      reason: 'unsupported-alg',
    });
    expect(await verifyAgentCard({ ...signed, signatures: [{ protected: '!!', signature: 'x' }] })).toMatchObject({ ok: false, reason: 'malformed-signature' });
  });
});
