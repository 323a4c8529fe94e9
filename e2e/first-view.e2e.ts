/**
 * The page's first frame (src-renderer/src/main.tsx): a cold load renders once the view on
 * screen has come, so the first thing drawn is that view, not the sidebar beside a "Loading…"
 * line; and a view that is slow to come does not hold the shell back past its bound. The built
 * CLI as a real child process with its demo peers, Debian's Chromium opening the printed URL in
 * a new profile each time, and a MutationObserver installed before any script of the page runs.
 */
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';

const ROWS = '#content table tbody th[scope="row"]';
const PLACEHOLDER = '.section-loading';

/** Records, in `__firstView`, when the placeholder and the rows first entered the DOM (ms from navigation start). */
const WATCH_SCRIPT = `(() => {
  const seen = { placeholderAt: null, rowsAt: null, sidebarAt: null };
  window.__firstView = seen;
  const check = () => {
    const now = performance.now();
    if (seen.placeholderAt === null && document.querySelector(${JSON.stringify(PLACEHOLDER)})) seen.placeholderAt = now;
    if (seen.sidebarAt === null && document.querySelector('nav')) seen.sidebarAt = now;
    if (seen.rowsAt === null && document.querySelector(${JSON.stringify(ROWS)})) seen.rowsAt = now;
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true });
})()`;

interface FirstView {
  placeholderAt: number | null;
  rowsAt: number | null;
  sidebarAt: number | null;
}

describe('the first frame of a cold load, served by `agentplane serve`', () => {
  let plane: ServeProcess;
  let dataDir: string;
  const dirs: string[] = [];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    dataDir = makeTempDir('first-view');
    plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' } });
  });

  afterAll(async () => {
    // The plane is stopped as the other browser suites stop theirs (SIGTERM, awaited), so the
    // demo peers it may have started end with it.
    await closeServeAndBrowser(undefined, plane, { also: contexts.map((context) => () => context.close()), dirs: [dataDir, ...dirs] });
  });

  async function freshContext(): Promise<BrowserContext> {
    const profile = makeTempDir('chromium-profile');
    dirs.push(profile);
    const context = await launchChromium(profile, { initScript: WATCH_SCRIPT });
    contexts.push(context);
    return context;
  }

  it('draws the Peers view with its rows in the first frame: no Loading… line before them', async () => {
    const context = await freshContext();
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
    await page.locator(ROWS).first().waitFor({ timeout: 15_000 });
    const seen = (await page.evaluate('window.__firstView')) as FirstView;
    expect(seen.rowsAt).not.toBeNull();
    expect(seen.placeholderAt).toBeNull();
  });

  it('opens the view the address names when it changed before the first frame: a change then is not lost', async () => {
    const context = await freshContext();
    // The Peers view's chunk is held, so the first frame (and with it the app's hashchange
    // listener) comes only after the address has moved to the Runs view.
    await context.route('**/assets/peers-section-*.js', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
    await page.evaluate('location.hash = "#/runs"');
    await page.getByRole('heading', { level: 1, name: 'Runs' }).waitFor({ timeout: 15_000 });
    await page.getByText(/^No runs yet\./).waitFor({ timeout: 15_000 });
    expect(await page.locator(ROWS).count()).toBe(0);
    expect(new URL(page.url()).hash).toBe('#/runs');
    // Once the first frame is up the token leaves the address for the tab's sessionStorage, and
    // the address it leaves is the one now shown: the route changed before then is kept.
    await expect.poll(() => page.url(), { timeout: 5_000 }).not.toContain('token=');
    expect(new URL(page.url()).hash).toBe('#/runs');
    const token = new URL(plane.url).searchParams.get('token');
    expect(token).toBeTruthy();
    expect(await page.evaluate("sessionStorage.getItem('agentplane.token')")).toBe(token);
  });

  it('does not hold the shell for a view chunk that is slow to come: the sidebar and the Loading… line show, then the view', async () => {
    const context = await freshContext();
    const HELD_MS = 3000;
    let heldAt = 0;
    await context.route('**/assets/peers-section-*.js', async (route) => {
      heldAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, HELD_MS));
      await route.continue();
    });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
    await page.locator(PLACEHOLDER).waitFor({ timeout: 15_000 });
    // The shell is on screen while the chunk is still held.
    expect(heldAt).toBeGreaterThan(0);
    expect(Date.now() - heldAt).toBeLessThan(HELD_MS);
    await page.locator(ROWS).first().waitFor({ timeout: 15_000 });
    const seen = (await page.evaluate('window.__firstView')) as FirstView;
    expect(seen.sidebarAt).not.toBeNull();
    expect(seen.placeholderAt).not.toBeNull();
    expect(seen.rowsAt! - seen.placeholderAt!).toBeGreaterThan(HELD_MS / 2);
  });
});
