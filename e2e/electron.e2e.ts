/**
 * The same shell checks as shell.e2e.ts, through the desktop app: playwright-core's
 * `_electron.launch` starts the built main process (out/main/index.js), and the page talks to
 * the plane over the preload's IPC instead of the web bridge.
 *
 * The Electron binary is not part of `npm install` (electron 42 and later fetch it on first use,
 * never in postinstall, so an offline install succeeds) and cannot be downloaded on CI, so where it is absent this suite is skipped with the reason printed; the Chromium suite
 * runs the same checks against the same renderer there. Detection mirrors
 * src-main/cli/electron-binary.ts (path.txt plus the file it names) without importing it, and
 * never calls the `electron` package's own resolver, which would try to download.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, PACKAGE_VERSION, REPO_ROOT, requireBuild } from './support/serve-process';
import {
  expectConnection,
  expectKeyboardNavigation,
  expectShellRendered,
  expectVersionShown,
  visitEverySection,
} from './support/shell-checks';

function installedElectronBinary(): string | null {
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    const candidate = join(process.env.ELECTRON_OVERRIDE_DIST_PATH, 'electron');
    return existsSync(candidate) ? candidate : null;
  }
  const dir = join(REPO_ROOT, 'node_modules', 'electron');
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const binary = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : null;
}

const electronBinary = installedElectronBinary();

if (!electronBinary) {
  console.log(
    'electron.e2e: skipped: Electron binary not installed (npx install-electron fetches it); ' +
      'the same e2e ran in Chromium through the web bridge (e2e/shell.e2e.ts).',
  );
}

type PageGlobals = { agentplane?: { host?: string }; require?: unknown; process?: unknown };

describe.skipIf(!electronBinary)('the shell in the Electron app', () => {
  let app: ElectronApplication;
  let page: Page;
  let dataDir: string;
  let homeDir: string;
  let closed = false;

  beforeAll(async () => {
    requireBuild();
    dataDir = makeTempDir('electron-data');
    // The app's own Chromium profile goes under XDG_CONFIG_HOME; a temp one keeps the
    // developer's real profile out of the test and the test out of it.
    homeDir = makeTempDir('electron-home');
    app = await _electron.launch({
      executablePath: electronBinary!,
      // Chromium refuses to start its sandbox as root (CI containers run as root); the page's
      // own `sandbox: true` web preference is still what the app sets and what is tested below.
      args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), REPO_ROOT],
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTPLANE_DATA_DIR: dataDir, XDG_CONFIG_HOME: homeDir, AGENTPLANE_DEMO_PEERS: '0' },
    });
    page = await app.firstWindow();
    await page.waitForLoadState('domcontentloaded');
  });

  afterAll(async () => {
    if (app && !closed) await app.close();
    for (const dir of [dataDir, homeDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders the Sections navigation and each section’s empty state', async () => {
    await expectShellRendered(page);
    await visitEverySection(page);
  });

  it('moves between sections from the keyboard', async () => {
    await expectKeyboardNavigation(page);
  });

  it('round-trips plane.status over IPC: Connected, and the package version in the status bar', async () => {
    await expectConnection(page, 'Connected');
    await expectVersionShown(page, PACKAGE_VERSION);
  });

  it('gives the page the preload’s one object and nothing of Node', async () => {
    const globals = await page.evaluate(() => {
      const g = globalThis as PageGlobals;
      return { host: g.agentplane?.host, require: typeof g.require, process: typeof g.process };
    });
    expect(globals).toEqual({ host: 'electron', require: 'undefined', process: 'undefined' });
  });

  it('quits cleanly and removes plane.json', async () => {
    expect(existsSync(join(dataDir, 'plane.json'))).toBe(true);
    await app.close();
    closed = true;
    expect(existsSync(join(dataDir, 'plane.json'))).toBe(false);
  });
});
