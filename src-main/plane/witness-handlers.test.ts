/**
 * A plane with an outside witness (docs/WITNESS.md): started with `witnessUrl`, it submits its
 * checkpoints (the last shutdown's at start) and `witness.status` says what the witness last
 * cosigned; without one, the status says so and nothing else changes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { call } from '../../tests/support/runtime-support';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { journalCli } from '../../tests/support/journal-cli';
import { runCliFromSource } from '../../tests/support/cli-from-source';
import { Journal } from '../journal/journal';
import { planeLogKey } from '../journal/witness/witness-client';
import { startWitness } from '../journal/witness/witness-server';
import { createPlane, type Plane } from './plane';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function plane(dataDir: string, witnessUrl?: string): Promise<Plane> {
  const p = await createPlane({ dataDir, version: 'test', host: 'headless', env: {}, ...(witnessUrl ? { witnessUrl, witnessRetryMs: 20 } : {}) });
  cleanups.push(() => p.close());
  return p;
}

describe('witness.status', () => {
  it('has a CLI twin, `agentplane witness status --json`', async () => {
    const witness = await startWitness({ dataDir: tempDataDir('ap-witness-') });
    cleanups.push(() => witness.close());
    const dataDir = tempDataDir();
    const none = await runCliFromSource(['witness', 'status', '--data-dir', dataDir, '--json'], { AGENTPLANE_WITNESS_URL: '' });
    expect(JSON.parse(none.stdout)).toEqual({ ok: true, result: { configured: false, url: null, cosigned: null, checkpointSize: 0, lastError: null } });
    const some = await runCliFromSource(['witness', 'status', '--data-dir', dataDir, '--json'], { AGENTPLANE_WITNESS_URL: `${witness.url}/` });
    expect(JSON.parse(some.stdout)).toMatchObject({ ok: true, result: { configured: true, url: witness.url } });
  }, 60_000);

  it('says no witness is configured when none is', async () => {
    const p = await plane(tempDataDir());
    expect(await call(p, 'witness.status', {})).toEqual({ configured: false, url: null, cosigned: null, checkpointSize: 0, lastError: null });
  });

  it("submits the plane's checkpoints and shows the size the witness cosigned; verify --witness-key then passes", async () => {
    const dataDir = tempDataDir();
    const journal = await Journal.open({ dataDir });
    const logKey = planeLogKey(journal);
    await journal.appendBatch(runDrafts('run-1', 3));
    await journal.close();
    const witness = await startWitness({ dataDir: tempDataDir('ap-witness-'), logKeys: [logKey] });
    cleanups.push(() => witness.close());

    // Records signed before the plane knew of a witness: its newest checkpoint goes at start.
    const p = await plane(dataDir, witness.url);
    await vi.waitFor(async () => {
      const status = await call(p, 'witness.status', {});
      expect(status.cosigned, JSON.stringify(status)).not.toBeNull();
      expect(status.cosigned!.size).toBe(status.checkpointSize);
      expect(status.checkpointSize).toBeGreaterThan(0);
    }, { timeout: 10_000, interval: 20 });
    const status = await call(p, 'witness.status', {});
    expect(status).toMatchObject({ configured: true, url: witness.url, lastError: null });
    expect(status.cosigned!.witness).toMatch(/^agentplane-witness\//);
    await p.close();

    const verified = await journalCli('verify', '--data-dir', dataDir, '--witness-key', witness.vkeyFile);
    expect(verified.code).toBe(0);
    expect(verified.lines.some((line) => line.startsWith(`WITNESS ${status.cosigned!.witness} cosigned tree size ${status.cosigned!.size}`))).toBe(true);
  });
});
