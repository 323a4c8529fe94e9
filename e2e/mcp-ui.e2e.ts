/**
 * The MCP section end to end, the way a person meets it: `agentplane serve` on a fresh data
 * dir, Debian's Chromium on its printed URL, and the official MCP reference server
 * (server-everything, run by `node … stdio`) declared, connected, disconnected and removed
 * through the page's own form and buttons. The plane's API is used only to read what the page
 * must agree with, to declare a server under a name the form then tries again (for the plane's
 * own refusal), and to start a run as an MCP host or a script would.
 *
 * The tests share one plane and one page and run in order: the plane's own endpoint with its
 * masked token and each host's snippets (copied with the real token); the empty server list;
 * a bad form refused field by field and the plane's own refusal shown verbatim; the server
 * added, connected (its tools listed), called by a run of an agent granted its echo tool (the
 * approval card and the timeline read as the call they are), disconnected and removed. Views
 * are screenshotted (ui-mcp-*.png) and scanned with axe-core; the last test fails on any
 * serious or critical violation found.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpEndpointView, McpServerView } from '../src-shared/protocol/mcp';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, callCommand, makeTempDir, REPO_ROOT, requireBuild, stableDataDir, startServe, type ServeProcess } from './support/serve-process';
import { emptyTextOf, expectConnection, POLL, sectionButton, sectionHeading } from './support/shell-checks';
import { cleanScreenshot, seriousAxeViolations, UI_SCREENSHOTS, type AxeFinding } from './support/ui-checks';

const EVERYTHING = join(REPO_ROOT, 'tools', 'mcp-conformance', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const SERVER = 'everything';
/** An env value typed into the form: it must never come back to the page. */
const ENV_SECRET = 'sk-e2e-never-shown-4711';
/** The message the run sends through the tool: the timeline must show it going and coming back. */
const MESSAGE = 'hello from the mcp e2e';
/**
 * An agent of this data dir that calls the server's echo tool, held for approval first: the
 * grant names the exact tool (a server cannot grant itself one).
 */
const ECHO_AGENT = `name: echo-mcp
description: Echo a message through the everything MCP server.
input:
  type: object
  required: [message]
  additionalProperties: false
  properties:
    message: { type: string, minLength: 1, maxLength: 200 }
steps:
  - as: echoed
    mcp: { server: ${SERVER}, tool: echo, args: { message: "{{input.message}}" } }
  - output: "{{steps.echoed}}"
grants:
  - { kind: mcp, name: ${SERVER}/echo, approve: true }
budget:
  maxEffects: 3
`;
/** server-everything starts in a second or two; a cold node on a busy machine takes longer. */
const CONNECT_WITHIN = { timeout: 30_000, interval: 100 };

describe('the MCP section in Chromium, with server-everything added through the form', () => {
  let plane: ServeProcess;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;
  const axeFindings: AxeFinding[] = [];
  const scanned: string[] = [];

  // ---- helpers (roles and names only) ----

  const main = () => page.getByRole('main');
  const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
  const endpointRegion = () => main().getByRole('region', { name: 'This plane as an MCP server', exact: true });
  const serversRegion = () => main().getByRole('region', { name: 'MCP servers your agents can call', exact: true });
  const serverCard = () => serversRegion().getByRole('article', { name: SERVER, exact: true });
  const form = () => main().getByRole('form', { name: 'Add an MCP server', exact: true });
  const hostTab = (name: string) => endpointRegion().getByRole('tablist', { name: 'MCP hosts' }).getByRole('tab', { name, exact: true });
  const timeline = () => page.getByRole('listbox', { name: /^Timeline of run-/ });
  const inspector = () => page.getByRole('complementary', { name: 'Record inspector' });
  const snippet = (host: string, transport: string) => endpointRegion().getByRole('region', { name: `${host} ${transport} config`, exact: true });

  async function plainCommand<T>(name: string, request: unknown = {}): Promise<T> {
    const answer = await callCommand(plane, name, request);
    if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return (answer.body as { value: T }).value;
  }

  async function captureView(view: string): Promise<void> {
    await cleanScreenshot(page, view);
    axeFindings.push(...(await seriousAxeViolations(page, view)));
    scanned.push(view);
  }

  const clipboard = () => page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    if (!existsSync(EVERYTHING)) throw new Error(`${EVERYTHING} is missing: install tools/mcp-conformance (npm ci in that folder)`);
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    dataDir = stableDataDir('mcp-ui');
    mkdirSync(join(dataDir, 'agents'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, 'agents', 'echo-mcp.yaml'), ECHO_AGENT, { mode: 0o600 });
    plane = await startServe({ dataDir });
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: plane.origin });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir] });
  });

  it('shows the plane’s own endpoint: URL (or why not), masked token, stdio command, revisions and agents, as the plane says', async () => {
    await expectConnection(page, 'Connected');
    await sectionButton(page, 'MCP').click();
    await sectionHeading(page, 'MCP').waitFor();
    const endpoint = await plainCommand<McpEndpointView>('mcp.endpoint');
    await endpointRegion().getByText(endpoint.versions.join(', '), { exact: false }).waitFor();
    const shown = await textOf(endpointRegion());
    if (endpoint.url === null) expect(shown).toContain('not serving over HTTP');
    else {
      expect(shown).toContain(endpoint.url);
      await endpointRegion().getByRole('button', { name: 'Copy the endpoint URL', exact: true }).waitFor();
    }
    for (const agent of endpoint.tools) expect(shown).toContain(agent);
    if (endpoint.token !== null) {
      // Masked until asked; the page's whole text never holds it meanwhile.
      expect(await textOf(main())).not.toContain(endpoint.token);
      const toggle = endpointRegion().getByRole('button', { name: 'Show token', exact: true });
      expect(await toggle.getAttribute('aria-pressed')).toBe('false');
      await endpointRegion().getByRole('button', { name: 'Copy the bearer token', exact: true }).waitFor();
    }
    await endpointRegion().getByRole('button', { name: 'Copy the stdio command', exact: true }).waitFor();
    await captureView('ui-mcp-endpoint');
  });

  it('offers each host’s snippet over HTTP and stdio; the copy holds the real token, the page a masked one', async () => {
    const endpoint = await plainCommand<McpEndpointView>('mcp.endpoint');
    const radio = (host: string, name: string) => endpointRegion().getByRole('radiogroup', { name: `How ${host} reaches the plane` }).getByRole('radio', { name, exact: true });

    // Claude Desktop first; HTTP when the plane serves it.
    expect(await hostTab('Claude Desktop').getAttribute('aria-selected')).toBe('true');
    if (endpoint.url !== null) {
      const http = JSON.parse((await snippet('Claude Desktop', 'HTTP').textContent()) ?? '') as { mcpServers: { agentplane: { url: string; headers: { Authorization: string } } } };
      expect(http.mcpServers.agentplane.url).toBe(endpoint.url);
      expect(http.mcpServers.agentplane.headers.Authorization).not.toContain(endpoint.token ?? '');
      const copy = endpointRegion().getByRole('button', { name: 'Copy the Claude Desktop HTTP config', exact: true });
      await copy.click();
      await expect.poll(clipboard, POLL).toContain(`Bearer ${endpoint.token}`);
      // "Copied" shows beside the button (components/copy-button.tsx), for 1.5 s.
      const copyStatus = copy.locator('xpath=following-sibling::*[@role="status"][1]');
      await expect.poll(async () => textOf(copyStatus), POLL).toBe('Copied');
      await expect.poll(async () => textOf(copyStatus), POLL).toBe('');
      const copied = JSON.parse(await clipboard()) as typeof http;
      expect(copied.mcpServers.agentplane).toEqual({ url: endpoint.url, headers: { Authorization: `Bearer ${endpoint.token}` } });
      // Revealing the token shows it in the snippet too.
      await endpointRegion().getByRole('button', { name: 'Show token', exact: true }).click();
      await expect.poll(async () => textOf(snippet('Claude Desktop', 'HTTP')), POLL).toContain(endpoint.token!);
      await endpointRegion().getByRole('button', { name: 'Hide token', exact: true }).click();
      await expect.poll(async () => textOf(main()), POLL).not.toContain(endpoint.token!);
    } else {
      expect(await textOf(endpointRegion())).toContain('not serving MCP over HTTP');
    }

    // The arrow keys move between hosts (one tab stop): Cursor, then VS Code.
    await hostTab('Claude Desktop').focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => hostTab('Cursor').getAttribute('aria-selected'), POLL).toBe('true');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => hostTab('VS Code').getAttribute('aria-selected'), POLL).toBe('true');
    if (endpoint.url !== null) {
      const vscode = JSON.parse((await snippet('VS Code', 'HTTP').textContent()) ?? '') as { servers: { agentplane: Record<string, unknown> } };
      expect(vscode.servers.agentplane).toMatchObject({ type: 'http', url: endpoint.url });
    }
    await radio('VS Code', 'stdio').check();
    const [command, ...args] = endpoint.stdioCommand;
    const stdio = JSON.parse((await snippet('VS Code', 'stdio').textContent()) ?? '') as { servers: { agentplane: Record<string, unknown> } };
    expect(stdio.servers.agentplane).toEqual({ type: 'stdio', command, args });
    await endpointRegion().getByRole('button', { name: 'Copy the VS Code stdio config', exact: true }).waitFor();
    await hostTab('Cursor').click();
    await radio('Cursor', 'stdio').check();
    const cursor = JSON.parse((await snippet('Cursor', 'stdio').textContent()) ?? '') as { mcpServers: { agentplane: Record<string, unknown> } };
    expect(cursor.mcpServers.agentplane).toEqual({ command, args });
  });

  it('shows the empty server list with its sentence, and the manifest hint', async () => {
    await serversRegion().getByText(emptyTextOf('MCP'), { exact: true }).waitFor();
    expect(await textOf(serversRegion())).toContain('0 declared · 0 connected');
    const hint = main().getByRole('region', { name: 'How an agent calls a tool', exact: true });
    expect(await textOf(hint)).toContain('- { kind: mcp, name: <server>/<tool> }');
  });

  it('refuses a bad form field by field, and shows the plane’s own refusal verbatim', async () => {
    await serversRegion().getByRole('button', { name: 'Add server…', exact: true }).click();
    await form().waitFor();
    await form().getByLabel('Name', { exact: true }).fill('Everything Server');
    await form().getByLabel('Environment, KEY=VALUE lines (optional)').fill(`EVERYTHING_TOKEN ${ENV_SECRET}`);
    await form().getByRole('button', { name: 'Add server', exact: true }).click();
    const name = form().getByLabel('Name', { exact: true });
    await expect.poll(() => name.getAttribute('aria-invalid'), POLL).toBe('true');
    // The error is the field's description, so focus on the field reads it; the value typed is never repeated.
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id), POLL).toBe(await name.getAttribute('id'));
    await form().getByText('Lowercase letters, digits and dashes, starting with a letter (at most 63).', { exact: true }).waitFor();
    expect(await form().getByLabel('Command', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // Exactly this sentence: the line is named, the value written on it is not repeated.
    await form().getByText('Line 1: write KEY=VALUE (no "=" found).', { exact: true }).waitFor();
    await cleanScreenshot(page, 'ui-mcp-form-errors', { keepFocus: true });
    axeFindings.push(...(await seriousAxeViolations(page, 'ui-mcp-form-errors')));
    scanned.push('ui-mcp-form-errors');

    // A server the plane already has under that name: the plane's refusal, word for word.
    const taken = { name: 'taken', config: { transport: 'stdio', command: 'node', args: [EVERYTHING, 'stdio'], env: {} } };
    expect((await callCommand(plane, 'mcp.servers.add', taken)).status).toBe(200);
    const refusal = await callCommand(plane, 'mcp.servers.add', taken);
    expect(refusal.status).not.toBe(200);
    const refusalMessage = (refusal.body as { error: { message: string } }).error.message;
    expect(refusalMessage).toMatch(/taken/);
    await name.fill('taken');
    await form().getByLabel('Command', { exact: true }).fill('node');
    await form().getByLabel('Environment, KEY=VALUE lines (optional)').fill('');
    await form().getByRole('button', { name: 'Add server', exact: true }).click();
    await main().getByText(refusalMessage, { exact: true }).waitFor();
    // Clean up behind the API's own server; the page follows on its next read.
    expect((await callCommand(plane, 'mcp.servers.remove', { name: 'taken' })).status).toBe(200);
  });

  it('adds server-everything over stdio through the form: its env names shown, never the value', async () => {
    await form().getByLabel('Name', { exact: true }).fill(SERVER);
    await form().getByRole('radio', { name: 'stdio (a command the plane starts)' }).check();
    await form().getByLabel('Command', { exact: true }).fill('node');
    await form().getByLabel('Arguments, one per line').fill(`${EVERYTHING}\nstdio`);
    await form().getByLabel('Environment, KEY=VALUE lines (optional)').fill(`EVERYTHING_TOKEN=${ENV_SECRET}`);
    await form().getByRole('checkbox', { name: 'Connect after adding' }).uncheck();
    await form().getByRole('button', { name: 'Add server', exact: true }).click();
    await form().waitFor({ state: 'detached' });
    await serverCard().waitFor();
    const card = await textOf(serverCard());
    expect(card).toContain('Disconnected');
    expect(card).toContain(`node ${EVERYTHING} stdio`);
    expect(card).toContain('EVERYTHING_TOKEN (values not shown)');
    expect(await page.content()).not.toContain(ENV_SECRET);
    const listed = await plainCommand<{ servers: McpServerView[] }>('mcp.servers.list');
    expect(listed.servers.map((s) => s.name)).toEqual([SERVER]);
  });

  it('connects it: state, negotiated revision, server info and its tools with their input schemas', async () => {
    await serverCard().getByRole('button', { name: `Connect ${SERVER}`, exact: true }).click();
    await expect.poll(async () => textOf(serverCard()), CONNECT_WITHIN).toContain('Connected');
    const view = (await plainCommand<{ servers: McpServerView[] }>('mcp.servers.list')).servers.find((s) => s.name === SERVER)!;
    expect(view.state).toBe('connected');
    const card = await textOf(serverCard());
    expect(card).toContain(view.negotiatedVersion!);
    expect(card).toContain(view.serverInfo!.name);
    const tools = serverCard().getByRole('list', { name: `Tools of ${SERVER}` });
    expect(await tools.getByRole('listitem').count()).toBe(view.tools!.length);
    expect(await textOf(tools)).toContain('echo');
    // The summary opens the details (the block inside carries the same label, hidden until then).
    await tools.getByText('Input schema of echo', { exact: true }).first().click();
    await expect.poll(async () => textOf(tools.getByRole('region', { name: 'Input schema of echo', exact: true })), POLL).toContain('"message"');
    if ((view.prompts ?? []).length > 0) expect(await textOf(serverCard().getByRole('list', { name: `Prompts of ${SERVER}` }))).toContain(view.prompts![0]!.name);
    // The hint now names a real tool of a connected server.
    const hint = main().getByRole('region', { name: 'How an agent calls a tool', exact: true });
    await expect.poll(async () => textOf(hint), POLL).toContain(`- { kind: mcp, name: ${SERVER}/${view.tools![0]!.name} }`);
    await captureView('ui-mcp-server');
  });

  it('a run calling its echo tool: the approval asks to call the tool with its arguments, the timeline shows the call and the answer', async () => {
    // Started through the API (as a host or a script would); everything after is the page.
    const started = await plainCommand<{ runId: string }>('runs.start', { agent: 'echo-mcp', input: { message: MESSAGE } });
    await sectionButton(page, 'Approvals').click();
    await sectionHeading(page, 'Approvals').waitFor();
    const item = main().getByRole('article', { name: 'Approval needed: echo-mcp', exact: true });
    await item.waitFor();
    const itemText = await textOf(item);
    expect(itemText).toContain(`Call MCP tool echo on ${SERVER}?`);
    expect(itemText).toMatch(new RegExp(`Effect\\s*mcp ${SERVER}/echo`));
    expect(itemText).toContain(`"message": "${MESSAGE}"`);
    await captureView('ui-mcp-approval');
    await item.getByRole('button', { name: 'Approve', exact: true }).click();
    await item.waitFor({ state: 'detached' });

    await page.goto(`${plane.url}#/runs/${started.runId}`);
    await timeline().waitFor();
    const call = timeline().getByRole('option').filter({ hasText: `MCP tool echo on ${SERVER} {"message":"${MESSAGE}"}` });
    await call.waitFor({ timeout: CONNECT_WITHIN.timeout });
    const answer = timeline().getByRole('option').filter({ hasText: `from mcp:${SERVER} · Echo: ${MESSAGE}` });
    await answer.waitFor({ timeout: CONNECT_WITHIN.timeout });
    await timeline().getByRole('option').filter({ hasText: /Sealed.*succeeded/ }).waitFor({ timeout: CONNECT_WITHIN.timeout });
    // The inspector reads the call for a person: server, tool, arguments; then the tool's text.
    await call.click();
    await expect.poll(async () => textOf(inspector()), POLL).toMatch(new RegExp(`MCP server\\s*${SERVER}\\s*\\(stdio:node\\)\\s*Tool\\s*echo`));
    expect(await textOf(inspector().getByRole('region', { name: 'MCP call' }))).toContain(`"message": "${MESSAGE}"`);
    await answer.click();
    await expect.poll(async () => textOf(inspector()), POLL).toContain(`Result from ${SERVER} (untrusted)`);
    expect(await textOf(inspector())).toContain(`Echo: ${MESSAGE}`);
    await captureView('ui-mcp-timeline');
    await sectionButton(page, 'MCP').click();
    await serverCard().waitFor();
  });

  it('disconnects it, then removes it after a confirmation', async () => {
    await serverCard().getByRole('button', { name: `Disconnect ${SERVER}`, exact: true }).click();
    await expect.poll(async () => textOf(serverCard()), CONNECT_WITHIN).toContain('Disconnected');
    expect(await serverCard().getByRole('list', { name: `Tools of ${SERVER}` }).count()).toBe(0);

    await serverCard().getByRole('button', { name: `Remove ${SERVER}…`, exact: true }).click();
    // Keep it: nothing happens.
    await serverCard().getByRole('button', { name: 'Keep it', exact: true }).click();
    expect((await plainCommand<{ servers: McpServerView[] }>('mcp.servers.list')).servers).toHaveLength(1);
    await serverCard().getByRole('button', { name: `Remove ${SERVER}…`, exact: true }).click();
    await serverCard().getByRole('button', { name: `Yes, remove ${SERVER}`, exact: true }).click();
    await serverCard().waitFor({ state: 'detached' });
    await serversRegion().getByText(emptyTextOf('MCP'), { exact: true }).waitFor();
    expect((await plainCommand<{ servers: McpServerView[] }>('mcp.servers.list')).servers).toEqual([]);
  });

  it('has no serious or critical axe violations in any view scanned', () => {
    expect(scanned).toEqual(['ui-mcp-endpoint', 'ui-mcp-form-errors', 'ui-mcp-server', 'ui-mcp-approval', 'ui-mcp-timeline']);
    expect(axeFindings, JSON.stringify(axeFindings, null, 2)).toEqual([]);
  });
});
