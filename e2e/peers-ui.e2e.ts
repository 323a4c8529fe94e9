/**
 * The Peers view speaks UI, not CLI, in Chromium against `agentplane serve`
 * with the demo peers: a stopped peer's prompt and payment forms are disabled and say why; a
 * peer created on the port a running peer holds is refused at once, at the port field, with a
 * remedy named in this form's own words (never a CLI flag). A run starts from a form generated
 * from the agent's input schema. Each view is scanned with axe.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { expectConnection, sectionButton, sectionHeading } from './support/shell-checks';
import { seriousAxeViolations, type AxeFinding } from './support/ui-checks';

describe('the Peers and Runs views in Chromium: UI words, schema forms', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  const axeFindings: AxeFinding[] = [];

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    dataDir = makeTempDir('peers-ui');
    plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' } });
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir, {});
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir] });
  });

  it('guides a first run on an empty data dir: four steps on Peers, each a button', async () => {
    await expectConnection(page, 'Connected');
    await sectionButton(page, 'Peers').click();
    await sectionHeading(page, 'Peers').waitFor();
    const guide = page.getByRole('region', { name: 'Getting started' });
    await guide.waitFor();
    const steps = guide.getByRole('listitem');
    expect(await steps.count()).toBe(4);
    const texts = (await steps.allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
    expect(texts).toEqual([
      'Start the demo peers Start alpha and beta',
      'Send a prompt from alpha to beta Open alpha',
      'Approve a payment Request a payment',
      "Open the run's journal Open Runs",
    ]);
    axeFindings.push(...(await seriousAxeViolations(page, 'peers-first-run')));
    await guide.getByRole('button', { name: 'Open Runs', exact: true }).click();
    await sectionHeading(page, 'Runs').waitFor();
    // The empty Runs view offers the action that fills it.
    await page.getByRole('button', { name: 'Run write-note', exact: true }).click();
    const form = page.getByRole('form', { name: 'Start a run' });
    expect(await form.getByLabel('Agent').inputValue()).toBe('write-note');
    await form.getByLabel('title', { exact: true }).waitFor();
    await form.getByRole('button', { name: 'Cancel', exact: true }).click();
  });

  it('disables the prompt and payment forms of a stopped peer and says why', async () => {
    await sectionButton(page, 'Peers').click();
    await sectionHeading(page, 'Peers').waitFor();
    await page.getByRole('button', { name: 'Alpha (demo) (alpha) details', exact: true }).click();
    const send = page.getByRole('button', { name: 'Send prompt' });
    const pay = page.getByRole('button', { name: 'Request payment' });
    await send.waitFor();
    expect(await send.isDisabled()).toBe(true);
    expect(await pay.isDisabled()).toBe(true);
    await expect.poll(() => send.getAttribute('aria-describedby')).toBeTruthy();
    const sendWhy = await page.locator(`[id="${await send.getAttribute('aria-describedby')}"]`).textContent();
    const payWhy = await page.locator(`[id="${await pay.getAttribute('aria-describedby')}"]`).textContent();
    expect(sendWhy).toBe('alpha is stopped: start it to send a prompt.');
    expect(payWhy).toBe('alpha is stopped: start it to request a payment.');
    axeFindings.push(...(await seriousAxeViolations(page, 'peers-stopped-detail')));
  });

  it('refuses at once a peer created on a running peer\'s port, naming the UI remedy', { timeout: 60_000 }, async () => {
    const beta = await client.call('peers.start', { id: 'beta' });
    const port = Number(/:(\d+)\//.exec(beta.address!)![1]);
    await page.getByRole('button', { name: 'Create peer' }).click();
    const form = page.getByRole('form', { name: 'Create a peer' });
    await form.getByLabel('Peer id', { exact: true }).fill('squatter');
    await form.getByLabel('Port', { exact: true }).fill(String(port));
    await form.getByRole('button', { name: 'Create peer' }).click();
    const error = form.getByText(/choose another port/);
    await error.waitFor();
    const text = (await error.textContent()) ?? '';
    expect(text).toBe(`port ${port} is in use by the running peer beta: choose another port or enable 'use the next free port'.`);
    expect(text).not.toContain('--');
    await form.getByRole('checkbox', { name: /use the next free port/i }).waitFor();
    expect((await client.call('peers.list', {})).peers.some((p) => p.id === 'squatter')).toBe(false);
    axeFindings.push(...(await seriousAxeViolations(page, 'peers-create-port-in-use')));
  });

  it('starts a run from a form generated from the agent\'s input schema, with the schema\'s messages and a raw-JSON toggle', { timeout: 60_000 }, async () => {
    await sectionButton(page, 'Runs').click();
    await sectionHeading(page, 'Runs').waitFor();
    // The Runs view reopens the form a "Run write-note" asked for (runs-section.tsx's
    // startFormRequest effect), so the toggle is pressed only while the form is closed. That
    // effect may land between reading the toggle's state and the click (a loaded machine), and
    // the click then closes what it opened: so the state is read again until the form is open.
    const toggle = page.getByRole('button', { name: 'Start a run', exact: true });
    const form = page.getByRole('form', { name: 'Start a run' });
    await expect
      .poll(async () => {
        if (await form.isVisible()) return true;
        if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
        return form.isVisible();
      }, { timeout: 30_000 })
      .toBe(true);
    // Choosing an agent shows its fields with its own defaults in the very commit that shows
    // them: read in the same task as the change event, before any effect could mend it.
    const firstPaint = await form.evaluate((element) => {
      type Field = { value: string; labels?: ArrayLike<{ textContent: string | null }> | null; dispatchEvent(event: unknown): boolean };
      const scope = element as unknown as { querySelectorAll(selector: string): ArrayLike<Field>; querySelector(selector: string): Field | null };
      const page = globalThis as unknown as { HTMLSelectElement: { prototype: object }; Event: new (type: string, init: { bubbles: boolean }) => unknown };
      const select = Array.from(scope.querySelectorAll('select')).find((s) => s.labels?.[0]?.textContent === 'Agent')!;
      Object.getOwnPropertyDescriptor(page.HTMLSelectElement.prototype, 'value')!.set!.call(select, 'pay-vendor');
      select.dispatchEvent(new page.Event('change', { bubbles: true }));
      return scope.querySelector('[data-field="currency"]')?.value ?? null;
    });
    expect(firstPaint).toBe('USD');
    expect(await form.getByLabel('Agent').inputValue()).toBe('pay-vendor');
    const amount = form.getByLabel('amount', { exact: true });
    const payee = form.getByLabel('payee', { exact: true });
    expect(await form.getByLabel('currency (optional)', { exact: true }).inputValue()).toBe('USD');
    await form.getByRole('button', { name: 'Start run' }).click();
    await form.getByText('amount is required.').waitFor();
    await form.getByText('payee is required.').waitFor();
    expect(await amount.getAttribute('aria-invalid')).toBe('true');
    await amount.fill('0');
    await payee.fill('ACME Corp');
    await form.getByRole('button', { name: 'Start run' }).click();
    await form.getByText('More than 0.').waitFor();
    await amount.fill('12.5');
    axeFindings.push(...(await seriousAxeViolations(page, 'runs-start-form')));

    await form.getByRole('checkbox', { name: 'Raw JSON' }).check();
    const raw = form.getByLabel('Input (JSON)');
    expect(JSON.parse(await raw.inputValue())).toEqual({ amount: 12.5, currency: 'USD', payee: 'ACME Corp' });
    await form.getByRole('checkbox', { name: 'Raw JSON' }).uncheck();
    expect(await payee.inputValue()).toBe('ACME Corp');

    const before = (await client.call('runs.list', {})).runs.length;
    await form.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(async () => (await client.call('runs.list', {})).runs.filter((r) => r.agent === 'pay-vendor').length, { timeout: 15_000 }).toBe(1);
    expect((await client.call('runs.list', {})).runs.length).toBe(before + 1);
  });

  it('has no serious or critical axe violations in the views above', () => {
    expect(axeFindings).toEqual([]);
  });
});
