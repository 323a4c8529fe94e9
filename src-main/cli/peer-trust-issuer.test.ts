/**
 * `agentplane peer trust-issuer`, the CLI twin of `peers.trustIssuer`, as a real process: it
 * writes the peer's token issuer into the registry (where the peer server reads it on each
 * request), refuses incomplete flags by name, and `--clear` takes it out again.
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { runCliFromSource } from '../../tests/support/cli-from-source';
import { PeerRegistry } from '../peers/peer-registry';

describe('agentplane peer trust-issuer', () => {
  it('sets, refuses incomplete flags, and clears a peer token issuer', { timeout: 90_000 }, async () => {
    const dataDir = tempDataDir('ap-cli-trust-issuer-');
    const d = ['--data-dir', dataDir];
    expect((await runCliFromSource(['peer', 'create', 'beta', ...d])).code).toBe(0);

    const missing = await runCliFromSource(['peer', 'trust-issuer', 'beta', '--name', 'corp', ...d]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('give --issuer, --actor (or --clear)');

    const keyFile = join(dataDir, 'issuer.jwk');
    writeFileSync(keyFile, JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })));
    const set = await runCliFromSource(['peer', 'trust-issuer', 'beta', '--name', 'corp', '--issuer', 'https://issuer.test', '--actor', 'agentplane', '--public-key-file', keyFile, '--json', ...d]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ ok: true, result: { id: 'beta' } });
    expect(new PeerRegistry(dataDir).get('beta')?.tokenIssuer).toMatchObject({ name: 'corp', issuer: 'https://issuer.test', actor: 'agentplane', publicKey: { kty: 'EC', crv: 'P-256' } });

    const cleared = await runCliFromSource(['peer', 'trust-issuer', 'beta', '--clear', ...d]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(new PeerRegistry(dataDir).get('beta')?.tokenIssuer).toBeUndefined();
  });
});
