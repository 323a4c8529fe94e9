/**
 * Editor sessions (ACP) end to end, the way a person meets them: `agentplane serve` on a fresh
 * data dir, Debian's Chromium on its printed URL, and `agentplane acp demo` (a scripted editor
 * and agent, written with the official ACP SDK, talking through `agentplane acp tap`) run as a
 * real child process while the page is open. Nothing is staged through the plane's API: every
 * session the page shows is one the tap journaled as its messages passed.
 *
 * The tests share one plane and one page and run in order: the empty section with its
 * instructions; an observed session arriving live and read tab by tab (conversation and plan,
 * tool calls with the diff and the terminal, the permission the editor answered, the raw wire
 * counted against the journal); then a session tapped with `--policy inbox`, whose permission
 * request the demo editor leaves open, answered by a click in the page, after which the demo
 * finishes its turn and the workspace file is edited.
 *
 * Every view is screenshotted where the README shows it (ui-acp-*.png) and scanned with
 * axe-core; the last test fails on any serious or critical violation found.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordView } from '../src-shared/ipc/contract';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { spawnCli, type CliProcess } from './support/cli-process';
import { closeServeAndBrowser, makeTempDir, PACKAGE_VERSION, requireBuild, stableDataDir, startServe, type ServeProcess } from './support/serve-process';
import { emptyTextOf, expectConnection, POLL, sectionButton, sectionHeading } from './support/shell-checks';
import { cleanScreenshot, seriousAxeViolations, UI_SCREENSHOTS, type AxeFinding } from './support/ui-checks';

/** What the demo sends and does (src-main/protocols/acp/demo/): the spec the page is held to. */
const DEMO_PROMPT = 'Make the greeting in greeting.ts friendlier, then check that it still works.';
const DEMO_SUMMARY = 'I changed greeting.ts to build the greeting with a template literal ending in an exclamation mark, then ran the check: greeting check: friendly (exit 0).';
const EDIT_TITLE = 'Edit greeting.ts';
const ALLOW_ONCE = 'Allow this edit (allow once)';
const FRIENDLY_LINE = 'return `Hello, ${name}!`;';
/** The tap's name for the demo agent (`acp demo` passes `--name demo-agent`). */
const TAP_NAME = 'demo-agent';
/** Long enough for a cold start of the demo editor, tap and agent (three node processes) on a busy machine. */
const DEMO_WITHIN_MS = 30_000;
const SLOW_POLL = { timeout: DEMO_WITHIN_MS, interval: 100 };
/** A test that runs a demo and scans several views (axe takes a second or two each). */
const LONG_TEST_MS = 120_000;

describe('Editor sessions (ACP) in Chromium, with the demo editor and agent through the tap', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  let workspaces: string;
  const demos: CliProcess[] = [];
  const axeFindings: AxeFinding[] = [];
  const scanned: string[] = [];

  // ---- helpers (roles and names only) ----

  const main = () => page.getByRole('main');
  const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
  const goToEditorSessions = async () => {
    await sectionButton(page, 'Editor sessions').click();
    await sectionHeading(page, 'Editor sessions').waitFor();
  };
  const sessionsTable = () => page.getByRole('table', { name: 'Editor sessions' });
  const sessionRows = () => sessionsTable().getByRole('row').filter({ has: page.getByRole('button', { name: /^Open session / }) });
  const tab = (name: string | RegExp) => page.getByRole('tablist', { name: 'Session views' }).getByRole('tab', { name, exact: typeof name === 'string' });
  const panel = () => page.getByRole('tabpanel');
  const verification = () => page.getByRole('status', { name: 'Journal verification' });
  const permissionCard = () => panel().getByRole('article', { name: `Permission for ${EDIT_TITLE}`, exact: true });
  const breadcrumb = () => page.getByRole('navigation', { name: 'Breadcrumb' });

  /** The row's cells after its header: editor, agent, cwd, started, state, prompts, tool calls, permission requests. */
  async function rowCells(row: Locator): Promise<string[]> {
    return (await row.getByRole('cell').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
  }

  /** Screenshot (light) plus an axe scan of the view as it is. */
  async function captureView(view: string): Promise<void> {
    await cleanScreenshot(page, view);
    await scanView(view);
  }

  /** An axe scan without a picture, for views the README does not show. */
  async function scanView(view: string): Promise<void> {
    axeFindings.push(...(await seriousAxeViolations(page, view)));
    scanned.push(view);
  }

  /** Every record of a run, read page by page as the UI does. */
  async function runRecords(runId: string): Promise<RecordView[]> {
    const records: RecordView[] = [];
    let fromSeq: number | null = 1;
    while (fromSeq !== null) {
      const answer: { records: RecordView[]; nextSeq: number | null } = await client.call('journal.records', { runId, fromSeq, limit: 500 });
      records.push(...answer.records.filter((r) => r.runId === runId));
      fromSeq = answer.nextSeq;
    }
    return records;
  }

  const isMessageObservation = (r: RecordView) => r.kind === 'Observation' && (r.body as { update?: unknown }).update === 'message';

  function startDemo(workspace: string, extra: string[] = []): CliProcess {
    const demo = spawnCli(['acp', 'demo', ...extra, '--workspace', workspace, '--data-dir', dataDir]);
    demos.push(demo);
    return demo;
  }

  async function sessionsOnPlane() {
    return (await client.call('acp.sessions', {})).sessions;
  }

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    // A stable path (when free) so the status bar and the sessions' working directories read the
    // same from run to run in the committed screenshots.
    dataDir = stableDataDir('acp-sessions');
    workspaces = `${dataDir}-workspaces`;
    rmSync(workspaces, { recursive: true, force: true });
    mkdirSync(workspaces, { recursive: true, mode: 0o700 });
    plane = await startServe({ dataDir });
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    for (const demo of demos) demo.dispose();
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir, workspaces] });
  });

  it('shows how to connect an editor while no session was observed: the tap command, the demo command and Zed’s snippet', async () => {
    await expectConnection(page, 'Connected');
    await goToEditorSessions();
    const empty = main().getByRole('region', { name: 'Connect an editor', exact: true });
    await empty.getByRole('heading', { level: 2, name: 'Connect an editor', exact: true }).waitFor();
    await empty.getByText(emptyTextOf('Editor sessions'), { exact: true }).waitFor();
    // As they run from the AgentPlane folder (`agentplane` is on no PATH there), into this plane's data dir.
    await empty.getByText(`npx agentplane acp tap --data-dir ${dataDir} -- <agent command>`, { exact: true }).waitFor();
    await empty.getByText(`npx agentplane acp demo --data-dir ${dataDir}`, { exact: true }).waitFor();
    for (const name of ['Copy the tap command', 'Copy the demo command', 'Copy the Zed settings snippet']) {
      await empty.getByRole('button', { name, exact: true }).waitFor();
    }
    const snippet = await empty.getByRole('region', { name: 'Zed settings snippet', exact: true }).textContent();
    // Valid JSON a person can paste, naming the tap as the agent server's command.
    expect(JSON.parse(snippet ?? '')).toEqual({
      agent_servers: { 'My agent via AgentPlane': { command: 'agentplane', args: ['acp', 'tap', '--data-dir', dataDir, '--name', 'my-agent', '--', 'my-agent', '--acp'] } },
    });
    expect(await sessionsTable().count()).toBe(0);
    await captureView('ui-acp-empty');
  });

  it('lists an observed demo session live, and reads it tab by tab: conversation and plan, tool calls, the editor’s permission answer, the raw wire against the journal', async () => {
    // A marker in the page: the session must arrive by the plane's events, not by a reload.
    await page.evaluate(() => ((globalThis as { __acpMarker?: boolean }).__acpMarker = true));
    const workspace = join(workspaces, 'observe');
    const demo = startDemo(workspace);

    const row = sessionRows().first();
    await row.waitFor({ timeout: DEMO_WITHIN_MS });
    const exit = await demo.finished(DEMO_WITHIN_MS);
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toMatch(/ended its turn: end_turn/);
    expect(readFileSync(join(workspace, 'greeting.ts'), 'utf8')).toContain(FRIENDLY_LINE);

    // The plane's account: the parties as `initialize` named them, and the counts.
    const [session] = await sessionsOnPlane();
    expect(session).toBeDefined();
    const { runId, sessionId } = session!;
    expect(session!.client.name).toBe('agentplane-demo-client');
    expect(session!.agent.name).toBe('agentplane-demo-agent');
    expect(session!.counts).toMatchObject({ prompts: 1, permissions: 1 });
    expect(session!.counts.toolCalls).toBeGreaterThanOrEqual(3);

    // The row says the same, in words, without a reload.
    await expect.poll(async () => (await rowCells(row))[4], POLL).toMatch(/^(Ended|Idle)/);
    const cells = await rowCells(row);
    expect(cells[0]).toBe(`AgentPlane demo client ${PACKAGE_VERSION}`);
    expect(cells[1]).toBe(`AgentPlane demo agent ${PACKAGE_VERSION}`);
    expect(cells[2]).toBe(session!.cwd);
    expect(cells[5]).toBe('1');
    expect(Number(cells[6])).toBe(session!.counts.toolCalls);
    expect(cells[7]).toBe('1');
    expect(await sessionRows().count()).toBe(1);
    expect(await page.evaluate(() => (globalThis as { __acpMarker?: boolean }).__acpMarker)).toBe(true);
    await scanView('ui-acp-list');

    // Open it: the conversation, with the plan above it.
    await row.getByRole('button', { name: `Open session ${TAP_NAME} ${sessionId}`, exact: true }).click();
    await breadcrumb().getByRole('button', { name: '← All editor sessions', exact: true }).waitFor();
    expect(page.url()).toContain(runId);
    expect(await tab('Conversation').getAttribute('aria-selected')).toBe('true');
    const conversation = panel().getByRole('list', { name: 'Conversation', exact: true });
    await expect.poll(() => textOf(conversation), POLL).toContain(DEMO_PROMPT);
    await expect.poll(() => textOf(conversation), POLL).toContain(DEMO_SUMMARY);
    expect(await textOf(conversation)).toContain('stop reason end_turn');
    const planHeading = panel().getByRole('heading', { name: /^Plan/ });
    await expect.poll(() => textOf(planHeading), POLL).toBe('Plan (3 of 3 done)');
    // Recorded as evidence (the tap's default): the conversation and plan are the transcript kept
    // beside the journal, and the page says so, with what the journal left out by wire name.
    const note = panel().getByRole('note', { name: 'Transcript, not evidence', exact: true });
    expect(await textOf(note)).toContain('The journal names what it left out: agent_thought_chunk 3, plan 4, agent_message_chunk 3.');
    const plan = panel().getByRole('region', { name: /^Plan/ }).getByRole('listitem');
    expect(await plan.count()).toBe(3);
    for (const entry of await plan.allTextContents()) expect(entry).toMatch(/^completed /);
    // The header agrees with the plane, and the journal verifies: like a run's timeline, the
    // session page starts the check itself when it opens.
    expect(await textOf(main())).toContain(`Wire messages${session!.counts.messages}`);
    await expect.poll(() => textOf(verification()), POLL).toMatch(/^Verified up to seq \d+ · root [0-9a-f]{8}…[0-9a-f]{4}$/);
    await captureView('ui-acp-session');

    // Tool calls: the edit as a diff of greeting.ts with its added line, and the check's terminal output.
    await tab(`Tool calls (${session!.counts.toolCalls})`).click();
    expect(await tab(`Tool calls (${session!.counts.toolCalls})`).getAttribute('aria-selected')).toBe('true');
    const edit = panel().getByRole('article', { name: EDIT_TITLE, exact: true });
    const diff = edit.getByRole('region', { name: `Diff of ${join(session!.cwd!, 'greeting.ts')}`, exact: true });
    await diff.waitFor();
    const diffLines = (await diff.textContent()) ?? '';
    expect(diffLines).toContain(`+added: ${FRIENDLY_LINE.replace('return', '  return')}`);
    expect(diffLines).toContain("-removed:   return 'Hello, ' + name;");
    // Shown as written: each line a block keeping its indentation (the comparison view's own
    // `diff-line` once overrode this one's white-space and display; its classes are its own now).
    const lineStyles = await diff.evaluate((element) =>
      [...element.querySelectorAll('.diff-line')].map((line) => {
        const style = element.ownerDocument.defaultView!.getComputedStyle(line);
        return `${style.display} ${style.whiteSpace}`;
      }),
    );
    expect(lineStyles.length).toBeGreaterThan(1);
    expect(new Set(lineStyles)).toEqual(new Set(['block pre']));
    expect(await textOf(edit)).toMatch(/completed/);
    const terminal = panel().getByRole('region', { name: /^Output of terminal / });
    await expect.poll(() => textOf(terminal), POLL).toContain('greeting check: friendly');
    // The picture starts at the edit, so its diff and the check's output are both in it.
    await edit.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await captureView('ui-acp-tools');

    // Permission requests: the editor answered it, allow once; nothing is left to answer here.
    await tab('Permission requests (1)').click();
    const card = permissionCard();
    await card.waitFor();
    expect(await textOf(card)).toContain('The editor chose “Allow this edit” (allow once)');
    const chosen = card.getByRole('group', { name: `Options for ${EDIT_TITLE}`, exact: true }).getByRole('button', { name: `${ALLOW_ONCE} — chosen`, exact: true });
    expect(await chosen.getAttribute('aria-pressed')).toBe('true');
    expect(await chosen.isDisabled()).toBe(true);
    await scanView('ui-acp-permissions-answered');

    // Raw wire: every record of the run is listed, and its messages are the journal's.
    await tab('Raw wire').click();
    const records = await runRecords(runId);
    const messages = records.filter(isMessageObservation);
    // The journal's messages are the evidence; the ten it left out are in the transcript, named.
    const view = await client.call('acp.session', { runId });
    const leftOut = Object.values(view.transcript?.leftOut ?? {}).reduce((sum, n) => sum + n, 0);
    expect(leftOut).toBe(10);
    expect(messages.length + leftOut).toBe(session!.counts.messages);
    const listbox = panel().getByRole('listbox', { name: /^Wire records \(messages and the tap's own\): \d+$/ });
    await expect.poll(async () => (await listbox.getAttribute('aria-label')) ?? '', POLL).toBe(`Wire records (messages and the tap's own): ${records.length}`);
    // The tap's own entries and the seal are shown beside the messages, marked "tap or plane";
    // the two directions together are exactly the message observations.
    const search = panel().getByRole('search', { name: "Search this session's wire" });
    const matching = panel().getByRole('listbox', { name: /^Wire records matching the search: \d+$/ });
    const countOf = async () => Number(/(\d+)$/.exec((await matching.getAttribute('aria-label')) ?? '')?.[1]);
    await search.getByLabel('Search messages', { exact: true }).fill('toagent');
    await expect.poll(countOf, POLL).toBe(messages.filter((r) => (r.body as { detail: { dir: string } }).detail.dir === 'toAgent').length);
    await search.getByLabel('Search messages', { exact: true }).fill('toeditor');
    await expect.poll(countOf, POLL).toBe(messages.filter((r) => (r.body as { detail: { dir: string } }).detail.dir === 'toEditor').length);
    await search.getByLabel('Search messages', { exact: true }).fill('session/prompt');
    await expect.poll(countOf, POLL).toBeGreaterThanOrEqual(1);
    await matching.getByRole('option').first().click();
    const selected = panel().getByRole('region', { name: 'Selected message', exact: true });
    await expect.poll(() => textOf(selected), POLL).toContain(DEMO_PROMPT);
    await search.getByRole('button', { name: 'Clear search', exact: true }).click();
    await expect.poll(async () => (await listbox.getAttribute('aria-label')) ?? '', POLL).toBe(`Wire records (messages and the tap's own): ${records.length}`);
    await scanView('ui-acp-wire');

    // The session is a run: its bundle exports like any other.
    const [download] = await Promise.all([page.waitForEvent('download'), main().getByRole('button', { name: 'Export bundle', exact: true }).click()]);
    expect(download.suggestedFilename()).toBe(`${runId}.jsonl`);
    const saved = join(profileDir, 'acp-export.jsonl');
    await download.saveAs(saved);
    expect(readFileSync(saved, 'utf8').trim().split('\n').filter((l) => l.includes(runId)).length).toBeGreaterThanOrEqual(records.length);

    // The transcript erased from the page (asked twice): the conversation's messages go, the
    // evidence stays, and the note says how much is no longer kept.
    await tab('Conversation').click();
    await panel().getByRole('button', { name: 'Erase transcript…', exact: true }).click();
    await panel().getByRole('button', { name: 'Erase', exact: true }).click();
    const erasedNote = panel().getByRole('note', { name: 'Transcript, not evidence', exact: true });
    await expect.poll(() => textOf(erasedNote), POLL).toContain('10 of them are no longer kept (erased or past retention).');
    const conversationAfter = panel().getByRole('list', { name: 'Conversation', exact: true });
    expect(await textOf(conversationAfter)).toContain(DEMO_PROMPT);
    expect(await textOf(conversationAfter)).not.toContain(DEMO_SUMMARY);
    expect(await textOf(conversationAfter)).toContain('stop reason end_turn');
    expect((await runRecords(runId)).length).toBe(records.length);
  }, LONG_TEST_MS);

  it('puts a permission request of a session tapped with --policy inbox before the person; answered by click, the demo finishes its turn and the file is edited', async () => {
    await breadcrumb().getByRole('button', { name: '← All editor sessions', exact: true }).click();
    await sessionsTable().waitFor();
    const observed = new Set((await sessionsOnPlane()).map((s) => s.runId));
    const workspace = join(workspaces, 'inbox');
    const demo = startDemo(workspace, ['--policy', 'inbox']);

    // The new session is listed live, waiting for the person.
    const row = sessionRows().filter({ hasText: 'policy: inbox' });
    await expect.poll(async () => (await rowCells(row.first()).catch(() => []))[4] ?? '', SLOW_POLL).toBe('Waiting for permissionpolicy: inbox');
    expect(await sessionRows().count()).toBe(2);
    const session = (await sessionsOnPlane()).find((s) => !observed.has(s.runId));
    expect(session).toMatchObject({ policy: 'inbox', state: 'waiting' });
    expect(demo.hasExited()).toBe(false);
    expect(readFileSync(join(workspace, 'greeting.ts'), 'utf8')).not.toContain(FRIENDLY_LINE);

    // The inbox session is the newest row; it is found by its policy text above.
    await row.getByRole('button', { name: /^Open session / }).click();
    await expect.poll(() => page.url(), POLL).toContain(session!.runId);
    await tab('Permission requests (1)').click();
    const card = permissionCard();
    await expect.poll(() => textOf(card), POLL).toContain('Waiting for an answer');
    expect(await textOf(card)).toContain('Choose an option to answer here, or answer in the editor: the agent gets the first answer.');
    const options = card.getByRole('group', { name: `Options for ${EDIT_TITLE}`, exact: true });
    const allow = options.getByRole('button', { name: ALLOW_ONCE, exact: true });
    expect(await allow.isEnabled()).toBe(true);
    expect(await options.getByRole('button').count()).toBe(3);
    // The check made on the first session covers the journal up to then; brought up to date,
    // the badge in the picture speaks of this session.
    await main().getByRole('button', { name: 'Verify again', exact: true }).click();
    await expect.poll(() => textOf(verification()), POLL).toMatch(/^Verified up to seq \d+ · root [0-9a-f]{8}…[0-9a-f]{4}$/);
    await captureView('ui-acp-permission');

    await allow.click();
    const exit = await demo.finished(DEMO_WITHIN_MS);
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain('end_turn');
    expect(readFileSync(join(workspace, 'greeting.ts'), 'utf8')).toContain(FRIENDLY_LINE);

    // Answered at the plane, by the local user; the page shows it without a reload.
    await expect.poll(() => textOf(card), POLL).toContain('user:local at the plane chose “Allow this edit” (allow once)');
    expect(await options.getByRole('button', { name: `${ALLOW_ONCE} — chosen`, exact: true }).getAttribute('aria-pressed')).toBe('true');
    const view = await client.call('acp.session', { runId: session!.runId });
    expect(view.permissions).toHaveLength(1);
    expect(view.permissions[0]!.outcome).toMatchObject({ by: 'plane:user:local', outcome: 'selected', optionId: 'allow_once' });
    await expect.poll(async () => (await client.call('acp.session', { runId: session!.runId })).state, POLL).toMatch(/^(ended|idle)$/);
    await scanView('ui-acp-permission-answered');

    await tab('Conversation').click();
    await expect.poll(() => textOf(panel().getByRole('list', { name: 'Conversation', exact: true })), POLL).toContain(DEMO_SUMMARY);
  }, LONG_TEST_MS);

  it('lists the permission request in Approvals beside every other wait, with its diff; answered there, the demo finishes its turn', async () => {
    const workspace = join(workspaces, 'approvals');
    const demo = startDemo(workspace, ['--policy', 'inbox']);
    await sectionButton(page, 'Approvals').click();
    await sectionHeading(page, 'Approvals').waitFor();
    const item = main().getByRole('article', { name: 'Editor permission request: acp:demo-agent', exact: true });
    await expect.poll(() => item.count(), SLOW_POLL).toBe(1);
    // The human question first: who asks to do what, where.
    await expect.poll(() => textOf(item), POLL).toMatch(new RegExp(`demo-agent asks to run ${EDIT_TITLE} \\(edit\\) on \\S+greeting\\.ts`));
    expect(await textOf(item.getByRole('region', { name: /^Diff of .*greeting\.ts$/ }))).toContain(FRIENDLY_LINE);
    expect(await textOf(item)).toContain('editor:agentplane-demo-client');
    // No spend meter: an observed session spends nothing through the plane.
    expect(await textOf(item)).not.toContain('Spent so far');
    await captureView('ui-approvals-permission');

    await item.getByRole('group', { name: `Options for ${EDIT_TITLE}`, exact: true }).getByRole('button', { name: ALLOW_ONCE, exact: true }).click();
    await item.waitFor({ state: 'detached' });
    const exit = await demo.finished(DEMO_WITHIN_MS);
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain('end_turn');
    expect(readFileSync(join(workspace, 'greeting.ts'), 'utf8')).toContain(FRIENDLY_LINE);
    await main().getByText('Nothing waits for you.', { exact: false }).waitFor();
  }, LONG_TEST_MS);

  it('has no serious or critical axe-core violations in any view', () => {
    expect(scanned).toEqual(
      expect.arrayContaining(['ui-acp-empty', 'ui-acp-list', 'ui-acp-session', 'ui-acp-tools', 'ui-acp-permissions-answered', 'ui-acp-wire', 'ui-acp-permission', 'ui-acp-permission-answered', 'ui-approvals-permission']),
    );
    expect(axeFindings, JSON.stringify(axeFindings, null, 2)).toEqual([]);
  });
});
