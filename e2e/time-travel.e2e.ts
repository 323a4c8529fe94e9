/**
 * Time travel end to end, the way a person uses it (docs/GOVERNED-RUNTIME.md, "Fork, replay,
 * diff"): `agentplane serve` with a three-step agent on the local model, Debian's Chromium on
 * the printed URL, every step a click, every check by role and accessible name.
 *
 * A finished run is forked from step 1 with another input: the fork's page says whose fork it
 * is and where, its step 0 taken from the parent (nothing performed); "Compare with parent"
 * shows step 0 from the parent, the same, and step 1 where the two part, its arguments (too
 * large to travel in the comparison) opened by their record. A dry replay of the parent with
 * nothing changed finds no divergence; two runs chosen in the Runs list compare too. Each view
 * is scanned with axe-core; the last test fails on any serious or critical violation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { expectConnection, POLL, sectionButton, sectionHeading } from './support/shell-checks';
import { cleanScreenshot, seriousAxeViolations, UI_SCREENSHOTS, type AxeFinding } from './support/ui-checks';

/**
 * Three model steps. The first does not read the input, so a fork from step 1 with another topic
 * takes it from the parent (a fork reuses the parent's steps only while they are the same);
 * the second and third name the topic, so the fork parts from its parent at step 1.
 */
const DRAFTS = `name: drafts
description: Three drafts about a topic with the local model.
input:
  type: object
  required: [topic]
  additionalProperties: false
  properties:
    topic: { type: string, minLength: 1 }
steps:
  - as: first
    model: { provider: local, prompt: "Pick an angle for a short piece of writing", maxTokens: 40 }
  - as: second
    model: { provider: local, prompt: "Draft about {{input.topic}}, from this angle: {{steps.first.text}}", maxTokens: 40 }
  - as: third
    model: { provider: local, prompt: "Final draft about {{input.topic}}, improving: {{steps.second.text}}", maxTokens: 40 }
  - output: "{{steps.third.text}}"
grants:
  - { kind: model, name: local }
budget:
  maxTokens: 20000
`;
const TOPIC = 'wooden boats';
// Over 2 KiB once in a prompt: the comparison sends the step's arguments by digest, to open.
const LONG_TOPIC = `copper sheathing on the hulls of sailing ships, ${'and why it kept the shipworm out '.repeat(80)}`.trim();

describe('time travel in Chromium: fork from a step, compare with the parent, dry replay', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  let parentId = '';
  let forkId = '';
  const axeFindings: AxeFinding[] = [];
  const scanned: string[] = [];

  const main = () => page.getByRole('main');
  const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
  const timeline = () => page.getByRole('listbox', { name: /^Timeline of run-/ });
  const breadcrumbRun = async () => /run-[0-9a-f]{20}/.exec(await textOf(page.getByRole('navigation', { name: 'Breadcrumb' })))?.[0] ?? '';
  const stepsTable = () => page.getByRole('table', { name: /^Steps of run-/ });
  const stepRow = (step: number) => stepsTable().getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^Step ${step}\\b`) }) });

  async function captureView(view: string): Promise<void> {
    await cleanScreenshot(page, view);
    axeFindings.push(...(await seriousAxeViolations(page, view)));
    scanned.push(view);
  }

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    dataDir = makeTempDir('time-travel');
    mkdirSync(join(dataDir, 'agents'), { mode: 0o700 });
    writeFileSync(join(dataDir, 'agents', 'drafts.yaml'), DRAFTS, { mode: 0o600 });
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

  it('forks a finished run from step 1 with another input; the fork says whose it is, its step 0 taken from the parent', async () => {
    const parent = await client.call('runs.start', { agent: 'drafts', input: { topic: TOPIC }, wait: true });
    expect(parent.outcome).toBe('succeeded');
    parentId = parent.runId;

    await expectConnection(page, 'Connected');
    await sectionButton(page, 'Runs').click();
    await sectionHeading(page, 'Runs').waitFor();
    await main().getByRole('button', { name: parentId, exact: true }).click();
    await timeline().waitFor();
    await main().getByRole('button', { name: 'Fork from step 1', exact: true }).click();

    const form = page.getByRole('form', { name: 'Fork from step 1' });
    const input = form.getByLabel('Input (JSON)');
    // The form starts from the parent's input.
    await expect.poll(async () => JSON.parse((await input.inputValue()) || 'null') as unknown, POLL).toEqual({ topic: TOPIC });
    await captureView('ui-fork-form');
    // A model that is no provider:model is refused at the field, before the plane is asked.
    await form.getByLabel('Model (optional)').fill('not a model');
    await form.getByRole('button', { name: 'Fork run', exact: true }).click();
    await form.getByRole('alert').filter({ hasText: 'provider:model' }).waitFor();
    await form.getByLabel('Model (optional)').fill('');
    await input.fill(JSON.stringify({ topic: LONG_TOPIC }));
    await form.getByRole('button', { name: 'Fork run', exact: true }).click();

    await expect.poll(breadcrumbRun, POLL).not.toBe(parentId);
    forkId = await breadcrumbRun();
    expect(forkId).toMatch(/^run-[0-9a-f]{20}$/);
    const forkOf = main().getByText(/^Fork of/);
    await expect.poll(() => textOf(forkOf), POLL).toContain(`Fork of ${parentId} at step 1`);
    await main().getByRole('button', { name: `Open the parent run ${parentId}`, exact: true }).waitFor();

    // The journal says it too: the fork's record of its parent, and step 0 answered from the parent's record.
    const forked = timeline().getByRole('option').filter({ hasText: 'Forked' });
    await expect.poll(() => textOf(forked), POLL).toContain(`fork of ${parentId} at step 1 · changed: input`);
    const reused = timeline().getByRole('option').filter({ hasText: 'Taken from parent' });
    await expect.poll(() => textOf(reused), POLL).toContain(`taken from ${parentId} (nothing performed)`);
    await expect.poll(async () => (await client.call('runs.get', { runId: forkId })).status, POLL).toBe('sealed');
    expect((await client.call('runs.get', { runId: forkId })).forkOf).toEqual({ runId: parentId, step: 1 });
    await captureView('ui-fork-timeline');
  });

  it('compares the fork with its parent: step 0 from the parent and the same, step 1 where they part, large arguments opened', async () => {
    await main().getByRole('button', { name: 'Compare with parent', exact: true }).click();
    await stepsTable().waitFor();
    expect(new URL(page.url()).hash).toBe(`#/runs/${parentId}/diff/${forkId}`);
    const where = page.getByRole('status', { name: 'Where they part' });
    await expect.poll(() => textOf(where), POLL).toMatch(/^They part at step 1 \(arguments\): /);

    const step0 = stepRow(0);
    await expect.poll(() => textOf(step0), POLL).toContain('from parent');
    expect(await textOf(step0)).toContain('same');
    const step1 = stepRow(1);
    expect(await textOf(step1)).toContain('Diverges here');
    expect(await textOf(step1)).not.toContain('from parent');
    const summary = page.getByRole('region', { name: 'Summary of the comparison' });
    expect(await textOf(summary)).toMatch(/Inputs:?\s*different/);
    expect(await textOf(summary)).toContain('Spend difference (b − a)');
    // The header's columns stand over the rows' columns: the view's sticky header once took
    // another view's padding (a shared class name) and stood 10 px off.
    const lefts = (row: 'head' | 'body') =>
      page
        .locator(row === 'head' ? '.rundiff-row-head' : '.rundiff-sizer > .rundiff-row')
        .first()
        .evaluate((container) => [...container.children].map((cell) => Math.round(cell.getBoundingClientRect().left)));
    const headLefts = await lefts('head');
    expect(headLefts).toHaveLength(3);
    expect(headLefts).toEqual(await lefts('body'));
    await captureView('ui-run-diff');

    // The fork's step 1 asked with the long topic: sent by digest, opened from its record.
    await step1.getByRole('button', { name: `Open arguments of step 1 in ${forkId}`, exact: true }).click();
    const opened = page.getByRole('region', { name: `Opened: the arguments of step 1 in ${forkId}`, exact: true });
    await expect.poll(() => textOf(opened), POLL).toContain('why it kept the shipworm out');
    await captureView('ui-run-diff-opened');
  });

  it('replays the parent dry with nothing changed: no divergence across its three steps', async () => {
    await main().getByRole('button', { name: `Open run ${parentId}`, exact: true }).click();
    await timeline().waitFor();
    await main().getByRole('button', { name: 'Dry replay', exact: true }).click();
    const form = page.getByRole('form', { name: 'Dry replay' });
    await form.getByRole('button', { name: 'Replay', exact: true }).click();
    const answer = form.getByRole('status', { name: 'Replay result' });
    await expect.poll(() => textOf(answer), POLL).toBe('No divergence across 3 steps');
    await captureView('ui-dry-replay');
  });

  it('compares any two runs of one agent chosen in the Runs list', async () => {
    await sectionButton(page, 'Runs').click();
    const compare = main().getByRole('button', { name: 'Compare', exact: true });
    await compare.waitFor();
    expect(await compare.isDisabled()).toBe(true);
    await main().getByRole('checkbox', { name: `Choose ${forkId} to compare`, exact: true }).check();
    await main().getByRole('checkbox', { name: `Choose ${parentId} to compare`, exact: true }).check();
    await captureView('ui-runs-compare');
    await compare.click();
    await stepsTable().waitFor();
    // The older run is a: the parent, whatever order they were chosen in.
    expect(new URL(page.url()).hash).toBe(`#/runs/${parentId}/diff/${forkId}`);
  });

  it('has no serious or critical axe-core violations in any view', () => {
    expect(scanned).toEqual(['ui-fork-form', 'ui-fork-timeline', 'ui-run-diff', 'ui-run-diff-opened', 'ui-dry-replay', 'ui-runs-compare']);
    expect(axeFindings, JSON.stringify(axeFindings, null, 2)).toEqual([]);
  });
});
