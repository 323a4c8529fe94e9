/**
 * Provenance at protected sinks in the browser (docs/GOVERNED-RUNTIME.md, "Provenance at
 * protected sinks"): a payment whose payee the local model named waits in Approvals, and the card
 * says where the payee came from (the model, through which template path); accepted by click, the
 * payment's own approval follows; in the run's timeline the model's answer says on hover where it
 * came from.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { POLL, sectionButton, sectionHeading } from './support/shell-checks';

const PAY_FROM_MODEL = `name: pay-from-model
description: Pays the vendor a model names.
input: { type: object }
steps:
  - as: vendor
    model: { provider: local, prompt: Name a vendor, maxTokens: 4 }
  - as: payment
    pay: { amount: 12, currency: USD, payee: "{{steps.vendor.text}}" }
  - output: "{{steps.payment}}"
grants:
  - { kind: model, name: local }
  - { kind: payment, name: request, approve: true }
`;

describe('provenance in the control UI', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  const textOf = async (locator: ReturnType<Page['locator']>) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    dataDir = makeTempDir('provenance-ui');
    mkdirSync(join(dataDir, 'agents'), { mode: 0o700 });
    writeFileSync(join(dataDir, 'agents', 'pay-from-model.yaml'), PAY_FROM_MODEL, { mode: 0o600 });
    plane = await startServe({ dataDir });
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir, {});
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir] });
  });

  it('the Approvals card says where the payee came from; accepted, the payment asks next; the timeline shows the origin on hover', async () => {
    const run = await client.call('runs.start', { agent: 'pay-from-model', input: {}, wait: true });
    expect(run.pending?.reason).toBe('provenance');
    const payee = (run.pending!.subject as { fields: Array<{ value: unknown }> }).fields[0]!.value as string;

    await sectionButton(page, 'Approvals').click();
    await sectionHeading(page, 'Approvals').waitFor();
    const card = page.getByRole('article', { name: 'Value from outside: pay-from-model' });
    await card.waitFor();
    expect(await textOf(card)).toContain('The payee of payment request came from model:local: let it through?');
    const origins = card.getByRole('list', { name: 'Where the values came from' });
    expect(await textOf(origins)).toBe(`payee ${JSON.stringify(payee)} came from model:local via steps.vendor.text`);

    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('article', { name: 'Payment request: pay-from-model' }).waitFor();
    await expect.poll(async () => (await client.call('runs.get', { runId: run.runId })).pending?.reason, POLL).toBe('payment');

    await page.goto(`${plane.url}#/runs/${run.runId}`);
    const answer = page.getByRole('listbox', { name: /^Timeline of run-/ }).getByRole('option').filter({ hasText: 'answered by local' }).first();
    await answer.waitFor();
    expect(await answer.locator('.c-what').getAttribute('title')).toBe('This value came from model:local (untrusted: an outside party could have chosen it)');
    const verdict = page.getByRole('listbox', { name: /^Timeline of run-/ }).getByRole('option').filter({ hasText: 'Provenance' }).first();
    expect(await textOf(verdict)).toContain(`asked a person · payment:request · payee ${JSON.stringify(payee)} from model:local via steps.vendor.text`);
  });
});
