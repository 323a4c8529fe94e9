/**
 * `agentplane a2a pins list|accept <origin>` as a person runs them: the CLI as a real process
 * (its TypeScript entry through tsx, no build needed), opening the data dir in-process. The pins
 * file is set up as a refused key change leaves it: a pinned key and a changed one pending.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { A2A_PINS_FILE, A2aPins } from '../protocols/a2a/client/a2a-pins';
import { runCliFromSource, type SourceCliRun } from '../../tests/support/cli-from-source';


function cli(args: string[]): Promise<SourceCliRun> {
  return runCliFromSource(args);
}

describe('agentplane a2a pins', () => {
  it('lists a changed key as refused, accepts it, and refuses a second accept naming why', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-a2a-cli-');
    const origin = 'https://agents.example.com';
    const pins = new A2aPins(dataDir);
    expect(pins.judge(origin, 'old-key', { kty: 'OKP', crv: 'Ed25519', x: 'b2xk' })).toEqual({ kind: 'pinned-now' });
    expect(pins.judge(origin, 'new-key', { kty: 'OKP', crv: 'Ed25519', x: 'bmV3' })).toMatchObject({ kind: 'changed' });
    if (process.platform !== 'win32') expect(statSync(join(dataDir, A2A_PINS_FILE)).mode & 0o777).toBe(0o600);
    const d = ['--data-dir', dataDir];

    const listed = await cli(['a2a', 'pins', 'list', ...d]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^https:\/\/agents\.example\.com {2}key old-key {2}pinned \S+ {2}CHANGED: key new-key seen \S+, refused until accepted$/m);

    const accepted = await cli(['a2a', 'pins', 'accept', `${origin}/a2a/x/.well-known/agent-card.json`, '--json', ...d]);
    expect(accepted.code).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({ ok: true, result: { origin, keyId: 'new-key' } });
    expect(pins.pinOf(origin)).toMatchObject({ keyId: 'new-key' });

    const again = await cli(['a2a', 'pins', 'accept', origin, '--json', ...d]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, error: { code: 'AP_CONFLICT', message: `${origin} has no changed key waiting to be accepted (its pinned key is new-key)` } });
  });
});
