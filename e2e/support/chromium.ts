/**
 * Debian's Chromium driven by playwright-core. Playwright's own browser download does not work
 * on the project's build machines, so the system binary (Debian's `chromium` package) is used
 * with the flags measured there.
 * A missing binary is a failure with the install command, never a skip: CI installs it, and a
 * skipped UI test would let a broken UI pass.
 */
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Measured on the build machines. `--disable-dev-shm-usage` because containers often give /dev/shm 64 MB,
 * which Chromium outgrows and then crashes tabs. The profile folder goes through
 * launchPersistentContext, never as --user-data-dir (Playwright refuses that flag).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export const VIEWPORT = { width: 1280, height: 800 };

export function requireChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}. Install it with \`apt-get update && apt-get install -y chromium\` ` +
        '(.ci/run does); the UI e2e tests need a real browser and are not skipped without one.',
    );
  }
}

export async function launchChromium(profileDir: string, options: { initScript?: string } = {}): Promise<BrowserContext> {
  requireChromium();
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: VIEWPORT,
    colorScheme: 'light',
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  if (options.initScript) await context.addInitScript({ content: options.initScript });
  return context;
}
