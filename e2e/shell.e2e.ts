/**
 * The UI shell end to end, the way `agentplane serve` ships it: the built CLI as a real child
 * process, Debian's Chromium opening the printed URL, and every assertion made through roles
 * and accessible names. The tests in this file share one plane and one page and run in order;
 * the last one shuts the plane down and checks it leaves nothing behind.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium, VIEWPORT } from './support/chromium';
import {
  makeTempDir,
  PACKAGE_VERSION,
  portAcceptsConnections,
  requireBuild,
  stableDataDir,
  startServe,
  stopWith,
  type ServeProcess,
} from './support/serve-process';
import {
  POLL,
  connectionIndicator,
  expectConnection,
  expectKeyboardNavigation,
  expectSectionShown,
  expectShellRendered,
  expectVersionShown,
  sectionButton,
  visitEverySection,
  type SectionLabel,
} from './support/shell-checks';
import { setRefuse, socketCounts, SOCKET_CONTROL_INIT_SCRIPT } from './support/socket-control';
import { SCREENSHOTS_DIR } from './support/screenshots-dir';

const SCREENSHOTS = SCREENSHOTS_DIR;

/** Collects the page's CSP violations (directive, what was blocked, where) in `__cspViolations`. */
const CSP_VIOLATIONS_INIT_SCRIPT = `
  globalThis.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    globalThis.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI + ' at ' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber);
  });
`;

type PageGlobals = { sessionStorage: { getItem(key: string): string | null } };

describe('the shell in Chromium, served by `agentplane serve`', () => {
  let plane: ServeProcess;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;

  /** A screenshot without hover or focus decoration, so the committed images only change when the UI does. */
  async function screenshot(name: string): Promise<void> {
    await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
    await page.evaluate(() => (globalThis as { document?: { activeElement?: { blur?: () => void } | null } }).document?.activeElement?.blur?.());
    await page.screenshot({ path: join(SCREENSHOTS, `shell-${name}.png`), animations: 'disabled', caret: 'hide' });
  }

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
    dataDir = stableDataDir('shell');
    plane = await startServe({ dataDir });
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir, { initScript: SOCKET_CONTROL_INIT_SCRIPT });
    page = context.pages()[0] ?? (await context.newPage());
    // Every Content-Security-Policy violation the page reports, from before its first script.
    await context.addInitScript(CSP_VIOLATIONS_INIT_SCRIPT);
    await page.goto(plane.url);
  });

  afterAll(async () => {
    await context?.close();
    plane?.dispose();
    for (const dir of [profileDir, dataDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders the Sections navigation with its six buttons and the current section’s heading', async () => {
    await expectShellRendered(page);
    await expectSectionShown(page, 'Peers');
  });

  it('round-trips plane.status through the bridge: the status bar shows the package version', async () => {
    await expectConnection(page, 'Connected');
    await expectVersionShown(page, PACKAGE_VERSION);
    // The data folder in the status bar also came from plane.status, so it is this plane's.
    expect(await page.getByTitle('Data folder', { exact: true }).textContent()).toBe(dataDir);
  });

  it('shows each section’s empty state when its button is clicked (screenshots: light)', async () => {
    await visitEverySection(page, async (label: SectionLabel) => {
      await screenshot(label.toLowerCase());
    });
  });

  it('breaks none of its own Content-Security-Policy while it loads and shows every section', async () => {
    // The policy has no 'unsafe-eval'. zod, unless told it is jitless (electron.vite.config.ts),
    // probes for eval with `new Function("")` as it builds its first object schema: refused, and
    // reported as a violation (and a console error) on every load of the page.
    await expectShellRendered(page);
    expect(await page.evaluate('globalThis.__cspViolations')).toEqual([]);
  });

  it('moves between sections from the keyboard: ArrowDown from a focused button, Alt+3 from anywhere', async () => {
    await expectKeyboardNavigation(page);
  });

  // Focus stays in the Sections list while moving through it (a roving tab stop): opening a
  // section must not pull focus to its heading.
  it('keeps focus in the Sections list, so ArrowDown twice goes Peers → Runs → Approvals', async () => {
    await sectionButton(page, 'Peers').click();
    await sectionButton(page, 'Peers').focus();
    await page.keyboard.press('ArrowDown');
    await expectSectionShown(page, 'Runs');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => sectionButton(page, 'Approvals').getAttribute('aria-current'), { timeout: 1500 }).toBe('page');
    expect(await page.locator(':focus').getAttribute('id')).toBe('nav-approvals');
    await page.keyboard.press('Alt+6');
    await expect.poll(() => page.locator(':focus').getAttribute('id'), { timeout: 1500 }).toBe('nav-acp');
  });

  it('answers a command from the page with the token (200) and refuses it without (401)', async () => {
    const answers = await page.evaluate(async (token) => {
      // The command route is POST (a command acts); a GET would not reach it at all.
      const send = async (headers: Record<string, string>) => {
        const response = await fetch('/api/commands/plane.status', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
        });
        return { status: response.status, body: (await response.json()) as unknown };
      };
      return { withToken: await send({ authorization: `Bearer ${token}` }), without: await send({}) };
    }, plane.token);
    expect(answers.withToken.status).toBe(200);
    expect(answers.withToken.body).toMatchObject({ ok: true, value: { version: PACKAGE_VERSION, host: 'headless', dataDir } });
    expect(answers.without.status).toBe(401);
    expect(answers.without.body).toMatchObject({ ok: false, error: { code: 'AP_UNAUTHORIZED' } });
  });

  it('takes the token out of the address bar, keeps it in sessionStorage, and still works after a reload', async () => {
    expect(page.url()).not.toContain('token=');
    // The hash is the UI's route (the open section), kept so a reload returns to the same view.
    expect(page.url().replace(/#.*$/, '')).toBe(`${plane.origin}/`);
    expect(await page.content()).not.toContain(plane.token);
    const stored = await page.evaluate(() => (globalThis as unknown as PageGlobals).sessionStorage.getItem('agentplane.token'));
    expect(stored).toBe(plane.token);

    await page.reload();
    expect(page.url()).not.toContain('token=');
    await expectShellRendered(page);
    await expectConnection(page, 'Connected');
    await expectVersionShown(page, PACKAGE_VERSION);
  });

  it('shows Reconnecting… while the event socket is down and refused, then Connected again', async () => {
    await expectConnection(page, 'Connected');
    const before = await socketCounts(page);
    expect(before.open, 'one event socket while connected').toBe(1);

    await setRefuse(page, true, true);
    await expectConnection(page, 'Reconnecting…');
    // A lost plane is obvious: a banner, the view marked stale, its controls disabled.
    const banner = page.getByRole('alert').filter({ hasText: 'The plane is not answering' });
    await expect.poll(() => banner.count(), POLL).toBe(1);
    expect(await page.locator('main fieldset.section-frame').getAttribute('disabled')).not.toBeNull();
    // At least two refused attempts: the retry loop is running and failing, not merely waiting.
    await expect.poll(async () => (await socketCounts(page)).refused, POLL).toBeGreaterThanOrEqual(2);
    expect((await connectionIndicator(page).textContent())?.trim()).toBe('Reconnecting…');

    await setRefuse(page, false);
    await expectConnection(page, 'Connected');
    await expect.poll(() => banner.count(), POLL).toBe(0);
    expect(await page.locator('main fieldset.section-frame').getAttribute('disabled')).toBeNull();
    const after = await socketCounts(page);
    expect(after.opened).toBeGreaterThan(before.opened);
    expect(after.open).toBe(1);
    await expectVersionShown(page, PACKAGE_VERSION);
  });

  it('renders the dark theme (screenshot)', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await sectionButton(page, 'Peers').click();
    await expectSectionShown(page, 'Peers');
    await expectConnection(page, 'Connected');
    await screenshot('peers-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('shuts down on SIGTERM with the page still open: exit 0 within 5 s, port closed, plane.json removed', async () => {
    const planeFile = join(dataDir, 'plane.json');
    expect(JSON.parse(readFileSync(planeFile, 'utf8'))).toMatchObject({ pid: plane.pid, port: plane.port });

    const exit = await stopWith(plane, 'SIGTERM', 5000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(await portAcceptsConnections(plane.port)).toBe(false);
    expect(existsSync(planeFile)).toBe(false);
    // The open page notices: its event socket was closed by the plane, and no new one is accepted.
    await expectConnection(page, 'Reconnecting…');
    expect(plane.stderr()).not.toMatch(/"level":"error"/);
  });
});
