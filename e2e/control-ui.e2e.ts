/**
 * The control UI end to end, the way a person uses it: `agentplane serve` with its two demo
 * peers (alpha and beta), Debian's Chromium on the printed URL, every step a click or a key,
 * every check made by role and accessible name. The tests share one plane and one page and run
 * in order, each building on what the one before left: peers started, a prompt sent from alpha
 * to beta, a payment approved, a run stopped at its ceiling and raised, a session revoked, a
 * peer stopped, and the window reloaded.
 *
 * Along the way every view is screenshotted (ui-*.png, light and two dark, under test-results/ or,
 * with `npm run screenshots`, e2e/screenshots/) and
 * scanned with axe-core; the last test fails on any serious or critical violation found.
 *
 * The plane is also asked directly (through the bridge, as a script would) for what the UI
 * must agree with: a record's hashes, a run's result.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordPreimage } from '../src-shared/journal/record-hash';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import {
  closeServeAndBrowser,
  makeTempDir,
  portAcceptsConnections,
  requireBuild,
  stableDataDir,
  startServe,
  type ServeProcess,
} from './support/serve-process';
import { expectConnection, POLL, sectionButton, sectionHeading, type SectionLabel } from './support/shell-checks';
import { cleanScreenshot, NOTIFICATION_RECORDER_INIT_SCRIPT, notificationsShown, seriousAxeViolations, UI_SCREENSHOTS, type AxeFinding } from './support/ui-checks';

const THRIFTY_TOPIC = 'the long history of wooden boats in the northern seas and their builders';

describe('the control UI in Chromium, with the demo peers', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  const axeFindings: AxeFinding[] = [];
  const scanned: string[] = [];
  let betaPort = 0;

  // ---- helpers (roles and names only) ----

  const main = () => page.getByRole('main');
  const go = async (label: SectionLabel) => {
    await sectionButton(page, label).click();
    await sectionHeading(page, label).waitFor();
  };
  const peerRow = (id: string, name: string): Locator =>
    page.getByRole('row').filter({ has: page.getByRole('button', { name: `${name} (${id}) details`, exact: true }) });
  const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
  const runs = async () => (await client.call('runs.list', {})).runs;
  const timeline = () => page.getByRole('listbox', { name: /^Timeline of run-/ });
  const inspector = () => page.getByRole('complementary', { name: 'Record inspector' });
  const verification = () => page.getByRole('status', { name: 'Journal verification' });

  /** Screenshot (light, and dark when asked) plus an axe scan of the view as it is. */
  async function captureView(view: string, options: { dark?: boolean; keepFocus?: boolean } = {}): Promise<void> {
    await cleanScreenshot(page, view, options);
    axeFindings.push(...(await seriousAxeViolations(page, view)));
    scanned.push(view);
    if (options.dark) {
      await page.emulateMedia({ colorScheme: 'dark' });
      await cleanScreenshot(page, `${view}-dark`, options);
      axeFindings.push(...(await seriousAxeViolations(page, `${view}-dark`)));
      scanned.push(`${view}-dark`);
      await page.emulateMedia({ colorScheme: 'light' });
    }
  }

  async function openRunFromList(agent: string): Promise<string> {
    await go('Runs');
    const row = page.getByRole('table', { name: 'Runs' }).getByRole('row').filter({ hasText: agent }).first();
    await row.waitFor();
    const button = row.getByRole('button').first();
    const runId = await textOf(button);
    await button.click();
    await timeline().waitFor();
    return runId;
  }

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    dataDir = stableDataDir('control-ui');
    plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' } });
    // The plane asked directly goes through the contract client, as the CLI does: every answer checked.
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir, { initScript: NOTIFICATION_RECORDER_INIT_SCRIPT });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    // alpha is still running here: the SIGTERM stops it with the plane.
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir] });
  });

  it('lists the demo peers and starts alpha and beta by click, showing progress, then address, health and uptime', async () => {
    await expectConnection(page, 'Connected');
    await go('Peers');
    await peerRow('alpha', 'Alpha (demo)').waitFor();
    await peerRow('beta', 'Beta (demo, LLM mode)').waitFor();
    expect(await textOf(peerRow('alpha', 'Alpha (demo)'))).toContain('Stopped');

    for (const [id, name] of [
      ['alpha', 'Alpha (demo)'],
      ['beta', 'Beta (demo, LLM mode)'],
    ] as const) {
      const row = peerRow(id, name);
      // Every text the row shows while it starts, recorded in the page so no state is missed.
      await page.evaluate(`(() => {
        const label = ${JSON.stringify(`${name} (${id}) details`)};
        window.__seen = [];
        new MutationObserver(() => {
          for (const tr of document.querySelectorAll('tr')) {
            if (tr.querySelector('[aria-label="' + label + '"]')) window.__seen.push(tr.textContent);
          }
        }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      })()`);
      await page.getByRole('button', { name: `Start ${id}`, exact: true }).click();
      await expect.poll(() => textOf(row), POLL).toMatch(/Running.*mcpv2:\/\/127\.0\.0\.1:\d+\/mcpv2.*Healthy/);
      const seen = await page.evaluate(() => (globalThis as { __seen?: string[] }).__seen ?? []);
      expect(seen.some((t) => t.includes('Starting…')), `${id} showed Starting… while it started`).toBe(true);
      await row.getByRole('button', { name: `Stop ${id}`, exact: true }).waitFor();
      await row.getByRole('button', { name: `Copy address of ${id}`, exact: true }).waitFor();
    }
    const betaText = await textOf(peerRow('beta', 'Beta (demo, LLM mode)'));
    betaPort = Number(/127\.0\.0\.1:(\d+)\/mcpv2/.exec(betaText)?.[1]);
    expect(betaPort).toBeGreaterThan(0);
    expect(await portAcceptsConnections(betaPort)).toBe(true);
    // Uptime ticks and sessions are counted (none yet).
    await expect.poll(async () => textOf(peerRow('alpha', 'Alpha (demo)')), POLL).toMatch(/Healthy\s*0\s*\d+ s/);
  });

  it('validates the create form, creates a peer, and shows why it cannot start (the port is busy)', async () => {
    await main().getByRole('button', { name: 'Create peer', exact: true }).click();
    const form = page.getByRole('form', { name: 'Create a peer' });
    await form.getByLabel('Peer id', { exact: true }).fill('Blocked Peer');
    await form.getByLabel('Port', { exact: true }).fill('99999');
    await form.getByRole('button', { name: 'Create peer', exact: true }).click();
    expect(await form.getByLabel('Peer id', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await form.getByText('Lowercase letters, digits and dashes, starting with a letter (at most 40).').waitFor();
    await form.getByText('A port from 0 to 65535 (0 picks a free one at each start).').waitFor();
    await captureView('ui-peer-create-form');

    await form.getByLabel('Peer id', { exact: true }).fill('blocked');
    // The plane's own UI port: taken, so the peer cannot bind it.
    await form.getByLabel('Port', { exact: true }).fill(String(plane.port));
    await form.getByRole('button', { name: 'Create peer', exact: true }).click();
    await form.waitFor({ state: 'detached' });
    const row = peerRow('blocked', 'blocked');
    await row.waitFor();
    await page.getByRole('button', { name: 'Start blocked', exact: true }).click();
    const alert = main().getByRole('alert').filter({ hasText: 'blocked' });
    await expect.poll(() => textOf(alert), POLL).toMatch(/already in use/);
    expect(await textOf(row)).toContain('Failed');
    // Close the detail the create form opened, then picture the list with its failure in place.
    await page.getByRole('button', { name: 'blocked (blocked) details', exact: true }).click();
    await captureView('ui-peers', { dark: true });
  });

  it('sends a prompt from alpha to beta; beta’s skill:ask run opens as a verified timeline with canonical JSON and hashes', async () => {
    await page.getByRole('button', { name: 'Alpha (demo) (alpha) details', exact: true }).click();
    const form = page.getByRole('form', { name: 'Send a prompt' });
    await form.getByLabel('To peer').selectOption('beta');
    await form.getByLabel('Prompt').fill('What does AgentPlane journal?');
    await form.getByRole('button', { name: 'Send prompt', exact: true }).click();
    const answer = page.getByRole('status', { name: 'Answer from beta' });
    await expect.poll(() => textOf(answer), POLL).toMatch(/^beta answered: .*What does AgentPlane journal\?/);

    const runId = await openRunFromList('skill:ask');
    expect(runId).toMatch(/^run-[0-9a-f]{20}$/);
    await expect.poll(() => timeline().getByRole('option').count(), POLL).toBeGreaterThanOrEqual(4);
    const admitted = timeline().getByRole('option').filter({ hasText: 'Admitted' });
    expect(await textOf(admitted)).toContain('skill:ask for peer:alpha');
    await admitted.click();
    expect(await admitted.getAttribute('aria-selected')).toBe('true');

    // The inspector agrees with the plane byte for byte: canonical JSON, hash, previous hash.
    const { records } = await client.call('journal.records', { runId, fromSeq: 1, limit: 10 });
    const first = records[0]!;
    const { hash, ...fields } = first;
    const canonical = recordPreimage({ seq: fields.seq, runId: fields.runId, kind: fields.kind, v: fields.v, time: fields.time, body: fields.body, prevHash: fields.prevHash });
    const shown = inspector().getByRole('region', { name: /^Canonical JSON/ });
    await expect.poll(() => shown.textContent(), POLL).toBe(canonical);
    const inspectorText = await textOf(inspector());
    expect(inspectorText).toContain(`Hash${hash}`);
    expect(inspectorText).toContain(`Previous hash${first.prevHash}`);
    await expect.poll(() => textOf(inspector()), POLL).toContain('Recomputed here: matches');
    await expect.poll(() => textOf(verification()), POLL).toMatch(/^Verified up to seq \d+ · root [0-9a-f]{8}…[0-9a-f]{4}$/);
    // The run's host is known from its RunAdmitted record.
    expect(await textOf(main())).toMatch(/Hosted by\s*peer:beta/);
  });

  it('groups a run’s records by step, and links its peer call to the skill run it admitted on beta and back', async () => {
    await go('Runs');
    await main().getByRole('button', { name: 'Start a run', exact: true }).click();
    const form = page.getByRole('form', { name: 'Start a run' });
    await form.getByLabel('Agent').selectOption('ask-peer');
    await form.getByRole('checkbox', { name: 'Raw JSON', exact: true }).check();
    await form.getByLabel('Input (JSON)').fill(JSON.stringify({ query: 'Who is asking?' }));
    await form.getByRole('button', { name: 'Start run', exact: true }).click();
    await timeline().waitFor();
    await expect.poll(() => textOf(main()), POLL).toContain('Succeeded');
    const callerId = /run-[0-9a-f]{20}/.exec(await textOf(page.getByRole('navigation', { name: 'Breadcrumb' })))![0];

    // The step's records sit under one head naming the effect, its duration and how it ended.
    const head = timeline().getByRole('option').filter({ hasText: /Effect startedstep 0\d+(\.\d)? m?s · done — peer beta\/ask/ });
    await expect.poll(() => head.count(), POLL).toBe(1);
    const options = timeline().getByRole('option');
    const texts = await options.allTextContents();
    const started = texts.findIndex((t) => t.includes('Effect started'));
    const done = texts.findIndex((t) => t.includes('Effect done'));
    expect(started).toBeGreaterThan(0);
    expect(done).toBeGreaterThan(started);
    expect(texts[done]).toContain('step 0'); // inside the group, said in words as well as drawn

    // Caller → callee → caller.
    const calls = main().getByRole('region', { name: 'Calls to peers' });
    await expect.poll(() => textOf(calls), POLL).toMatch(/run-[0-9a-f]{20} skill:ask on peer:beta · by step 0 Succeeded/);
    const calleeId = /run-[0-9a-f]{20}/.exec(await textOf(calls))![0];
    expect(calleeId).not.toBe(callerId);
    await calls.getByRole('button', { name: `Open the called run ${calleeId}`, exact: true }).click();
    await expect.poll(() => textOf(page.getByRole('navigation', { name: 'Breadcrumb' })), POLL).toContain(calleeId);
    const calledBy = main().getByRole('region', { name: 'Called by' });
    await expect.poll(() => textOf(calledBy), POLL).toContain(`${callerId} ask-peer on the plane · from its step 0`);
    expect(await textOf(calledBy)).not.toContain('unconfirmed');
    await calledBy.getByRole('button', { name: `Open the calling run ${callerId}`, exact: true }).click();
    await expect.poll(() => textOf(page.getByRole('navigation', { name: 'Breadcrumb' })), POLL).toContain(callerId);
    await captureView('ui-run-links');
  });

  it('puts a pay request from alpha to beta in the inbox with a notification; approved by click, the decision is in its timeline and the run ends moved:false', async () => {
    // More waiting items, started as a script would, so the inbox shows every kind side by side.
    await client.call('runs.start', { agent: 'ask-first', input: { question: 'Which vendor should be paid first?' } });
    await client.call('runs.start', { agent: 'write-note', input: { title: 'Release notes', topic: 'what changed this week' } });

    await go('Peers');
    await page.getByRole('button', { name: 'Alpha (demo) (alpha) details', exact: true }).click();
    const form = page.getByRole('form', { name: 'Request a payment' });
    await form.getByLabel('To peer').selectOption('beta');
    await form.getByLabel('Amount').fill('12.5');
    await form.getByLabel('Payee').fill('ACME Supplies');
    await form.getByRole('button', { name: 'Request payment', exact: true }).click();
    const reply = page.getByRole('status', { name: 'Payment request to beta' });
    await expect.poll(() => textOf(reply), POLL).toMatch(/^Waiting for a person: run run-[0-9a-f]{20}\./);
    const runId = /run-[0-9a-f]{20}/.exec(await textOf(reply))![0];
    // The notification (the toast's same line) is the human question, said once: amount, currency, payee, for whom, which run.
    await expect.poll(async () => (await notificationsShown(page)).map((n) => n.body), POLL).toContain(`Pay 12.50 USD to ACME Supplies — for peer:alpha, run ${runId} (skill:pay).`);

    await reply.getByRole('button', { name: 'Open it in Approvals', exact: true }).click();
    await sectionHeading(page, 'Approvals').waitFor();
    const item = page.getByRole('article', { name: 'Payment request: skill:pay' });
    await item.waitFor();
    const itemText = await textOf(item);
    expect(itemText).toContain(runId);
    // The one-line question comes first, above the details.
    expect(itemText).toMatch(/^Payment request: skill:pay.*?Pay 12\.50 USD to ACME Supplies\s*Run/);
    expect(itemText).toMatch(/On behalf of\s*peer:alpha/);
    expect(itemText).toMatch(/Effect\s*payment request → payee:ACME Supplies/);
    // A payment costs its amount; no model-cost estimate beside it.
    expect(itemText).toMatch(/Would cost\s*12\.50 USD/);
    expect(itemText).not.toContain('(estimate)');
    expect(itemText).toContain('"payee": "ACME Supplies"');
    expect(await textOf(page.getByRole('article', { name: 'Input requested: ask-first' }))).toContain('Answer: Which vendor should be paid first?');
    await page.getByRole('article', { name: 'Approval needed: write-note' }).waitFor();
    // The link scrolled the payment into view; the picture starts at the top of the inbox.
    await main().evaluate((element) => element.scrollTo(0, 0));
    await captureView('ui-approvals', { dark: true });

    await item.getByRole('button', { name: 'Approve', exact: true }).click();
    await item.waitFor({ state: 'detached' });
    await expect.poll(async () => (await runs()).find((r) => r.runId === runId)?.outcome, POLL).toBe('succeeded');
    const sealed = (await runs()).find((r) => r.runId === runId)!;
    expect(sealed.result).toMatchObject({ moved: false, status: 'approved-intent', payee: 'ACME Supplies' });
    // Spend totals the approved intent on its own line, never mixed with model cost.
    await go('Spend');
    await expect.poll(() => textOf(page.getByRole('region', { name: 'Payment intents' })), POLL).toContain('intents approved: 12.50 USD, moved: 0');

    await openRunFromList('skill:pay');
    const decision = timeline().getByRole('option').filter({ hasText: 'approve by user:local' });
    await decision.waitFor();
    await decision.click();
    await expect.poll(() => textOf(inspector()), POLL).toContain('Decision');
    await expect.poll(() => textOf(main()), POLL).toMatch(/Succeeded/);
    expect(await textOf(main())).toContain('"moved":false');
    await expect.poll(() => textOf(verification()), POLL).toMatch(/^Verified up to seq/);
    await captureView('ui-timeline', { dark: true });

    // Export: the plane's bundle, handed to the person as a file, with a busy state meanwhile.
    const [download] = await Promise.all([page.waitForEvent('download'), main().getByRole('button', { name: 'Export bundle', exact: true }).click()]);
    expect(download.suggestedFilename()).toBe(`${runId}.jsonl`);
    const saved = join(profileDir, 'export.jsonl');
    await download.saveAs(saved);
    const lines = readFileSync(saved, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.includes(runId)).length).toBeGreaterThanOrEqual(6);
    await expect.poll(() => textOf(main()), POLL).toMatch(new RegExp(`Saved ${runId}\\.jsonl: 6 records, root [0-9a-f]{8}…`));

    // Search within the run: by kind, then by text; the matches replace the list until cleared.
    const search = page.getByRole('search', { name: 'Search this run' });
    await search.getByLabel('Kind', { exact: true }).selectOption('Decision');
    await expect.poll(() => textOf(search.getByRole('status')), POLL).toBe('1 match in all 6 records.');
    const matches = page.getByRole('listbox', { name: /matching the search$/ });
    expect(await textOf(matches.getByRole('option'))).toContain('approve by user:local');
    await search.getByLabel('Kind', { exact: true }).selectOption('');
    await search.getByLabel('Search records', { exact: true }).fill('ACME Supplies');
    await expect.poll(() => textOf(search.getByRole('status')), POLL).toMatch(/^[2-9] matches in all 6 records\.$/);
    await search.getByRole('button', { name: 'Clear search', exact: true }).click();
    await timeline().waitFor();
  });

  it('answers an input request in the inbox, and filters runs by agent, peer and status', async () => {
    await go('Approvals');
    const item = page.getByRole('article', { name: 'Input requested: ask-first' });
    await item.getByLabel('Your answer').fill('ACME Supplies, then the rest.');
    await item.getByRole('button', { name: 'Send answer', exact: true }).click();
    await item.waitFor({ state: 'detached' });

    await go('Runs');
    const table = page.getByRole('table', { name: 'Runs' });
    await page.getByLabel('Peer', { exact: true }).selectOption('alpha');
    await expect.poll(async () => (await table.getByRole('row').allTextContents()).slice(1).every((t) => t.includes('peer:alpha')), POLL).toBe(true);
    expect(await table.getByRole('row').count()).toBe(3); // header, skill:ask, skill:pay
    await page.getByLabel('Status', { exact: true }).selectOption('suspended');
    await expect.poll(() => table.count(), POLL).toBe(0);
    await main().getByText('No run matches these filters. Clear them to see every run.').waitFor();
    await page.getByRole('button', { name: 'Clear filters', exact: true }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption('write-note');
    await expect.poll(async () => (await table.getByRole('row').count()) - 1, POLL).toBe(1);
    await page.getByRole('button', { name: 'Clear filters', exact: true }).click();
    await captureView('ui-runs');
  });

  it('runs thrifty from the UI, sees it stop at its ceiling, raises the ceiling in the inbox, and spend moves', async () => {
    await go('Runs');
    await main().getByRole('button', { name: 'Start a run', exact: true }).click();
    const form = page.getByRole('form', { name: 'Start a run' });
    await form.getByLabel('Agent').selectOption('thrifty');
    // The plane validates the input against the agent's schema; its answer shows at the field.
    // Raw JSON, since the generated form cannot send a field the schema does not have.
    await form.getByRole('checkbox', { name: 'Raw JSON', exact: true }).check();
    await form.getByLabel('Input (JSON)').fill('{"subject": "boats"}');
    await form.getByRole('button', { name: 'Start run', exact: true }).click();
    await form.getByRole('alert').filter({ hasText: 'does not match its schema' }).waitFor();
    await form.getByLabel('Input (JSON)').fill(JSON.stringify({ topic: THRIFTY_TOPIC }));
    await form.getByRole('button', { name: 'Start run', exact: true }).click();
    await timeline().waitFor();
    await expect.poll(() => textOf(main()), POLL).toContain('Waiting: budget ceiling reached');
    const runId = /run-[0-9a-f]{20}/.exec(await textOf(page.getByRole('navigation', { name: 'Breadcrumb' })))![0];

    await go('Spend');
    const byRun = page.getByRole('region', { name: 'By run, against its ceilings' });
    const row = byRun.getByRole('row').filter({ hasText: runId });
    await expect.poll(() => textOf(row), POLL).toMatch(/Stopped at its ceiling/);
    const before = /(\d+) \/ 100/.exec(await textOf(row))?.[1];
    expect(Number(before)).toBeGreaterThan(0);
    await row.getByRole('button', { name: 'Raise it or stop the run', exact: true }).click();

    await sectionHeading(page, 'Approvals').waitFor();
    const item = page.getByRole('article', { name: 'Budget ceiling reached: thrifty' });
    expect(await textOf(item)).toContain('it would pass the tokens ceiling (100 tokens)');
    // The number explained in one line: the next call's estimate and how much of the ceiling is used.
    expect(await textOf(item)).toMatch(new RegExp(`next call estimated at \\d+ tokens; ${before} of 100 used`));
    await item.getByLabel('New token ceiling').fill('1000');
    await item.getByRole('button', { name: 'Raise ceiling', exact: true }).click();
    await item.waitFor({ state: 'detached' });
    await expect.poll(async () => (await runs()).find((r) => r.runId === runId)?.outcome, POLL).toBe('succeeded');

    await go('Spend');
    await expect.poll(() => textOf(row), POLL).toMatch(/Succeeded/);
    // Read in the poll too: the table may re-render between two reads of the row (a refresh of the list).
    const tokensUsed = async () => Number(/([\d,]+) \/ 1,000/.exec(await textOf(row))?.[1]?.replace(/,/g, '') ?? Number.NaN);
    await expect.poll(tokensUsed, POLL).toBeGreaterThan(Number(before));
    await page.getByRole('img', { name: /^Cumulative tokens over time/ }).waitFor();
    await captureView('ui-spend');
  });

  it('reaches actions from the command palette (Ctrl+K): shortcuts shown, approve the first waiting item (its open timeline grows live), verify the journal', async () => {
    // The write-note run waits for approval; its timeline stays open while the palette decides.
    await openRunFromList('write-note');
    const before = await timeline().getByRole('option').count();
    expect(await textOf(timeline())).not.toContain('approve by user:local');

    await page.keyboard.press('Control+k');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.waitFor();
    const input = palette.getByRole('combobox', { name: 'Command' });
    expect(await page.evaluate(() => (globalThis as { document?: { activeElement?: { getAttribute(n: string): string | null } | null } }).document?.activeElement?.getAttribute('role'))).toBe('combobox');
    expect(await palette.getByRole('option', { name: 'Go to Peers', exact: true }).getAttribute('aria-keyshortcuts')).toBe('Alt+1');
    for (const name of ['Stop alpha', 'Start a run of thrifty…', 'Verify the journal', 'Create a peer…']) {
      await palette.getByRole('option', { name, exact: true }).waitFor();
    }
    await captureView('ui-palette', { keepFocus: true });
    await input.fill('start');
    expect(await palette.getByRole('option').first().textContent()).toMatch(/Start /);

    await input.fill('approve the first');
    const approveFirst = palette.getByRole('option', { name: 'Approve the first waiting item: Approval needed, write-note', exact: true });
    await approveFirst.waitFor();
    await page.keyboard.press('Enter');
    await palette.waitFor({ state: 'detached' });
    await expect.poll(async () => (await runs()).find((r) => r.agent === 'write-note')?.outcome, POLL).toBe('succeeded');
    // Live tail: the decision and what followed it arrive in the open timeline, by seq.
    await timeline().getByRole('option').filter({ hasText: 'approve by user:local' }).waitFor();
    await timeline().getByRole('option').filter({ hasText: /Sealed.*succeeded/ }).waitFor();
    expect(await timeline().getByRole('option').count()).toBeGreaterThan(before);

    await page.keyboard.press('Control+k');
    await palette.getByRole('combobox', { name: 'Command' }).fill('verify');
    await page.keyboard.press('Enter');
    await page.getByRole('status', { name: 'Notifications' }).filter({ hasText: /^Journal verified: \d+ records\.$/ }).waitFor();

    await page.keyboard.press('Control+k');
    await palette.getByRole('combobox', { name: 'Command' }).fill('sessions');
    await page.keyboard.press('Enter');
    await sectionHeading(page, 'Sessions').waitFor();
  });

  it('shows a session a caller opened on beta and revokes it by click', async () => {
    const response = await fetch(`http://127.0.0.1:${betaPort}/mcpv2/session`);
    expect(response.status).toBe(200);
    await go('Sessions');
    // Sessions are the peer's own state, polled every 5 s; Refresh now reads them at once.
    await main().getByRole('button', { name: 'Refresh now', exact: true }).click();
    const table = page.getByRole('table', { name: 'Sessions of beta' });
    await table.waitFor({ timeout: 3_000 });
    const revoke = table.getByRole('button', { name: /^Revoke session .+ on beta$/ });
    expect(await revoke.count()).toBe(1);
    expect(await textOf(table)).toMatch(/127\.0\.0\.1/);
    await captureView('ui-sessions');
    await revoke.click();
    await main().getByText('No live sessions on beta. A caller gets one with GET /mcpv2/session on its address.').waitFor();
  });

  it('opens a session on alpha from its detail with a quick ping; Sessions lists it with its calls, and beta lists alpha\'s identity', async () => {
    await go('Peers');
    const ping = main().getByRole('button', { name: 'Open a session and ping', exact: true });
    if (!(await ping.isVisible())) await page.getByRole('button', { name: 'Alpha (demo) (alpha) details', exact: true }).click();
    await ping.click();
    const answered = main().getByRole('status').filter({ hasText: 'alpha answered in' });
    await expect.poll(() => textOf(answered), POLL).toMatch(/^alpha answered in [\d.]+ ms on session sess_[0-9a-f]{12}\./);
    const label = /sess_[0-9a-f]{12}/.exec(await textOf(answered))![0];
    await answered.getByRole('button', { name: 'See it in Sessions', exact: true }).click();
    await sectionHeading(page, 'Sessions').waitFor();
    const table = page.getByRole('table', { name: 'Sessions of alpha' });
    const row = table.getByRole('row').filter({ hasText: label });
    // Who, since when, last used, calls made: the ping's one call.
    await expect.poll(() => textOf(row), POLL).toMatch(/127\.0\.0\.1.*(?:just now|ago)1in /);
    // Beta was called by alpha with its identity (the prompt and the payment): one row for the caller.
    const identities = page.getByRole('table', { name: 'Identity credentials in use on beta' });
    await expect.poll(() => textOf(identities.getByRole('row').filter({ hasText: 'peer:alpha' })), POLL).toMatch(/^peer:alpha127\.0\.0\.1.*(?:just now|ago)(?:[2-9]|\d\d)$/);
    await captureView('ui-sessions-ping');
  });

  it('stops beta by click and its port is freed', async () => {
    await go('Peers');
    const row = peerRow('beta', 'Beta (demo, LLM mode)');
    await page.getByRole('button', { name: 'Stop beta', exact: true }).click();
    await expect.poll(() => textOf(row), POLL).toMatch(/Stopped/);
    expect(await portAcceptsConnections(betaPort)).toBe(false);
  });

  it('keeps everything across a reload: the open view, peers, runs and the inbox come back from the plane', async () => {
    const runId = await openRunFromList('thrifty');
    const before = page.url();
    expect(before).toContain(`#/runs/${runId}`);
    await page.reload();
    await expectConnection(page, 'Connected');
    expect(page.url()).toBe(before);
    await timeline().waitFor();
    await expect.poll(() => textOf(main()), POLL).toContain('Succeeded');
    await go('Peers');
    await expect.poll(() => textOf(peerRow('alpha', 'Alpha (demo)')), POLL).toMatch(/Running/);
    await expect.poll(() => textOf(peerRow('beta', 'Beta (demo, LLM mode)')), POLL).toMatch(/Stopped/);
    await go('Runs');
    await expect.poll(async () => (await page.getByRole('table', { name: 'Runs' }).getByRole('row').count()) - 1, POLL).toBe((await runs()).length);
    await go('Approvals');
    await main().getByText('Nothing waits for you.', { exact: false }).waitFor();
    await go('Editor sessions');
    await captureView('ui-acp-empty');
  });

  it('has no serious or critical axe-core violations in any view', () => {
    expect(scanned).toEqual(
      expect.arrayContaining(['ui-peers', 'ui-peers-dark', 'ui-peer-create-form', 'ui-runs', 'ui-timeline', 'ui-timeline-dark', 'ui-approvals', 'ui-approvals-dark', 'ui-spend', 'ui-sessions', 'ui-palette', 'ui-acp-empty']),
    );
    expect(axeFindings, JSON.stringify(axeFindings, null, 2)).toEqual([]);
  });
});
