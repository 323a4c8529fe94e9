/**
 * `agentplane peer list` as a person reads it: a stopped peer created with port 0 (the demo
 * peers are) takes any free port at each start, so it is listed as `port any`, never `port 0`.
 * The CLI as a real process (its TypeScript entry through tsx), opening a new data dir, which
 * registers the demo peers.
 */
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { runCliFromSource } from '../../tests/support/cli-from-source';

describe('agentplane peer list', () => {
  it('shows a stopped any-port peer as `port any`, and a fixed port as itself', { timeout: 60_000 }, async () => {
    const d = ['--data-dir', tempDataDir('ap-cli-peer-list-')];
    expect((await runCliFromSource(['peer', 'create', 'fixed', '--port', '48123', ...d], { AGENTPLANE_DEMO_PEERS: '1' })).code).toBe(0);
    const listed = await runCliFromSource(['peer', 'list', ...d]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^alpha +stopped +port any +auth:both$/m);
    expect(listed.stdout).toMatch(/^fixed +stopped +port 48123 +auth:both$/m);
    expect(listed.stdout).not.toContain('port 0');
  });
});
