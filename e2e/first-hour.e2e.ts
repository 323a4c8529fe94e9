/**
 * The first hour of a newcomer, in Chromium against `agentplane serve` on a fresh data dir: the
 * demo command the Editor sessions view shows is run exactly as shown, from the repo, and its
 * session arrives in this plane; an address naming no run says so, with a way back; a payment
 * waits as its amount, announced once; and its timeline's Suspended row reads as waiting for
 * approval, before and after the approval, never as done.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { childEnv, closeServeAndBrowser, makeTempDir, REPO_ROOT, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { expectConnection, POLL, sectionButton, sectionHeading } from './support/shell-checks';
import { cleanScreenshot, UI_SCREENSHOTS } from './support/ui-checks';

/** A cold `npx` and the demo's three node processes on a busy machine. */
const DEMO_WITHIN_MS = 60_000;

describe('the first hour, in Chromium', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  const leftovers: string[] = [];

  const main = () => page.getByRole('main');
  const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
  const timeline = () => page.getByRole('listbox', { name: /^Timeline of run-/ });

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    dataDir = makeTempDir('first-hour');
    plane = await startServe({ dataDir });
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir, ...leftovers] });
  });

  it('runs the Editor sessions demo command exactly as shown, from the repo, and its session lands in this plane', async () => {
    await expectConnection(page, 'Connected');
    await sectionButton(page, 'Editor sessions').click();
    await sectionHeading(page, 'Editor sessions').waitFor();
    const empty = main().getByRole('region', { name: 'Connect an editor', exact: true });
    const demo = (await empty.getByText(/\bacp demo\b/).textContent())?.trim();
    expect(demo).toBe(`npx agentplane acp demo --data-dir ${dataDir}`);
    await cleanScreenshot(page, 'first-hour-acp-empty');

    // A shell in the clone, as a person pastes it (the environment names no data dir of its own).
    const run = spawn('sh', ['-c', demo!], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    run.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    run.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolveExit, reject) => {
      const timer = setTimeout(() => {
        run.kill('SIGKILL');
        reject(new Error(`${demo} did not finish within ${DEMO_WITHIN_MS} ms:\n${output}`));
      }, DEMO_WITHIN_MS);
      run.once('close', (exit) => {
        clearTimeout(timer);
        resolveExit(exit);
      });
    });
    // The demo's temporary workspace, named on its stderr.
    const workspace = /editing (\S+)/.exec(output)?.[1];
    if (workspace) leftovers.push(workspace);
    expect(code, output).toBe(0);
    // Live, by the plane's events: the demo's session is in this view, not in another data dir's.
    await page.getByRole('table', { name: 'Editor sessions' }).getByRole('button', { name: /^Open session demo-agent / }).waitFor({ timeout: 10_000 });
    expect((await client.call('acp.sessions', {})).sessions.length).toBe(1);
  });

  it('an address naming no run says so, and leads back to the runs', async () => {
    await page.goto(`${plane.url}#/runs/run-doesnotexist`);
    await main().getByText("No run run-doesnotexist in this plane's journal.", { exact: true }).waitFor();
    await cleanScreenshot(page, 'first-hour-no-such-run');
    await main().getByRole('button', { name: 'Show all runs', exact: true }).click();
    await sectionHeading(page, 'Runs').waitFor();
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe('#/runs');
    await main().getByRole('button', { name: 'Start a run', exact: true }).waitFor();
  });

  it('a payment waits as its amount, announced once; its timeline reads as waiting for approval, not done, before and after it', async () => {
    await sectionButton(page, 'Approvals').click();
    await sectionHeading(page, 'Approvals').waitFor();
    const started = await client.call('runs.start', { agent: 'pay-vendor', input: { amount: 42.5, payee: 'ACME Corp' } });
    // The toast, read while it shows (it hides after a few seconds).
    const toast = page.getByRole('status', { name: 'Notifications' }).filter({ hasText: /^New in Approvals\./ });
    await toast.waitFor();
    expect(await toast.textContent({ timeout: 1000 })).toBe(`New in Approvals. Pay 42.50 USD to ACME Corp — for user:local, run ${started.runId} (pay-vendor).`);
    const card = page.getByRole('article', { name: 'Payment request: pay-vendor' });
    await card.waitFor();
    const cardText = await textOf(card);
    expect(cardText).toMatch(/Would cost\s*42\.50 USD/);
    expect(cardText).not.toContain('(estimate)');
    await cleanScreenshot(page, 'first-hour-payment');

    await card.getByRole('button', { name: started.runId, exact: true }).click();
    await timeline().waitFor();
    const suspended = timeline().getByRole('option').filter({ hasText: 'Suspended' });
    await expect.poll(() => textOf(suspended), POLL).toMatch(/waiting for approval of the payment/);
    expect(await textOf(suspended)).not.toMatch(/\bdone\b|\d+(\.\d+)? m?s\b/);
    await cleanScreenshot(page, 'first-hour-suspended');

    await sectionButton(page, 'Approvals').click();
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    await page.goto(`${plane.url}#/runs/${started.runId}`);
    await timeline().getByRole('option').filter({ hasText: /Sealed.*succeeded/ }).waitFor();
    const done = timeline().getByRole('option').filter({ hasText: 'Effect done' });
    expect(await textOf(done)).toMatch(/\d+ ms · done — /);
    expect(await textOf(suspended)).toMatch(/payment request — waiting for approval of the payment/);
    expect(await textOf(suspended)).not.toMatch(/\bdone\b|\d+(\.\d+)? m?s\b/);
    await cleanScreenshot(page, 'first-hour-approved');
  });
});
