/**
 * The outside witness in the browser (docs/WITNESS.md): `agentplane serve` started with
 * AGENTPLANE_WITNESS_URL naming a witness on loopback; once the plane has issued a checkpoint
 * (an export issues one) and the witness has cosigned it, the run timeline's journal check says
 * which witness vouches for the journal and up to which seq. A witness that stops answering is
 * said so, with what it cosigned before.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { startWitness, type RunningWitness } from '../src-main/journal/witness/witness-server';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { POLL } from './support/shell-checks';
import { seriousAxeViolations } from './support/ui-checks';

const ECHO = `name: echo-once
description: Echoes one line.
input: { type: object }
steps:
  - as: said
    tool: { name: echo, args: { line: witnessed } }
  - output: "{{steps.said}}"
grants:
  - { kind: tool, name: echo }
`;

describe('the outside witness in the control UI', () => {
  let witness: RunningWitness;
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  let witnessDir: string;
  const textOf = async (locator: ReturnType<Page['locator']>) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    witnessDir = makeTempDir('witness');
    witness = await startWitness({ dataDir: witnessDir });
    dataDir = makeTempDir('witness-ui');
    mkdirSync(join(dataDir, 'agents'), { mode: 0o700 });
    writeFileSync(join(dataDir, 'agents', 'echo-once.yaml'), ECHO, { mode: 0o600 });
    plane = await startServe({ dataDir, env: { AGENTPLANE_WITNESS_URL: witness.url } });
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir, {});
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await witness?.close();
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir, witnessDir] });
  });

  it('the journal check names the witness and the seq it cosigned up to; a witness gone quiet is said so', async () => {
    const run = await client.call('runs.start', { agent: 'echo-once', input: {}, wait: true });
    expect(run.outcome).toBe('succeeded');
    // An export signs a checkpoint over every record; the plane submits it to the witness.
    const exported = await client.call('journal.exportRun', { runId: run.runId });
    await expect.poll(async () => (await client.call('witness.status', {})).cosigned?.size ?? 0, POLL).toBeGreaterThanOrEqual(exported.records);
    const cosigned = (await client.call('witness.status', {})).cosigned!.size;

    await page.goto(`${plane.url}#/runs/${run.runId}`);
    // The timeline checks the journal once its first page is in: the button reads "Verify again"
    // once that check answered, "Verify journal" before; either asks again now.
    await page.getByRole('button', { name: /^Verify (journal|again)$/ }).click();
    const pill = page.locator('.pill').filter({ hasText: /^Witness / });
    await expect.poll(() => textOf(pill), POLL).toMatch(new RegExp(`^Witness ${witness.url.replace(/[.]/g, '\\.')}: cosigned up to seq ${cosigned.toLocaleString('en-US')} · `));
    expect(await seriousAxeViolations(page, 'ui-witness')).toEqual([]);

    // The witness stops; the next checkpoint cannot be cosigned, and the check says so.
    await witness.close();
    await client.call('runs.start', { agent: 'echo-once', input: {}, wait: true });
    await client.call('journal.exportRun', { runId: run.runId });
    await expect.poll(async () => (await client.call('witness.status', {})).lastError, POLL).not.toBeNull();
    await page.getByRole('button', { name: 'Verify again', exact: true }).click();
    await expect.poll(() => textOf(pill), POLL).toMatch(new RegExp(`cosigned up to seq ${cosigned.toLocaleString('en-US')}; not reachable now$`));
  });
});
