/**
 * Helpers for the control UI e2e (control-ui.e2e.ts): an axe-core scan that keeps the serious
 * and critical violations, a recorder standing in for the Web Notification API (a headless
 * browser shows nothing, so the page's calls are recorded instead and read back), and a
 * screenshot that leaves no hover, focus or toast in the committed image.
 *
 * Everything a test asserts is found by role and accessible name; nothing here matches a CSS
 * class.
 */
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { VIEWPORT } from './chromium';
import { SCREENSHOTS_DIR } from './screenshots-dir';

export const UI_SCREENSHOTS = SCREENSHOTS_DIR;

export interface AxeFinding {
  view: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Runs axe-core on the page as it is now; returns what is serious or critical, labelled with the view. */
export async function seriousAxeViolations(page: Page, view: string): Promise<AxeFinding[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ view, id: v.id, impact: v.impact ?? '', help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

/**
 * Replaces `window.Notification` before the page's own code runs: permission is granted and
 * every notification is pushed onto `window.__agentplaneNotifications`.
 */
export const NOTIFICATION_RECORDER_INIT_SCRIPT = `(() => {
  const seen = [];
  class RecordedNotification {
    static permission = 'granted';
    static requestPermission() { return Promise.resolve('granted'); }
    constructor(title, options) {
      seen.push({ title, body: (options && options.body) || '' });
      this.onclick = null;
    }
    close() {}
  }
  Object.defineProperty(window, '__agentplaneNotifications', { value: seen });
  window.Notification = RecordedNotification;
})();`;

export function notificationsShown(page: Page): Promise<Array<{ title: string; body: string }>> {
  return page.evaluate(() => {
    const seen = (globalThis as { __agentplaneNotifications?: Array<{ title: string; body: string }> }).__agentplaneNotifications;
    if (!seen) throw new Error('the notification recorder init script did not run in this page');
    return [...seen];
  });
}

/**
 * A screenshot without hover, focus or a toast in it, so committed images change only when
 * the UI does. Escape dismisses the toast (the announcement was already made).
 */
export async function cleanScreenshot(page: Page, name: string, options: { keepFocus?: boolean } = {}): Promise<void> {
  await page.mouse.move(VIEWPORT.width - 4, VIEWPORT.height - 4);
  if (!options.keepFocus) {
    await page.keyboard.press('Escape');
    await page.evaluate(() => (globalThis as { document?: { activeElement?: { blur?: () => void } | null } }).document?.activeElement?.blur?.());
  }
  await page.screenshot({ path: join(UI_SCREENSHOTS, `${name}.png`), animations: 'disabled', caret: 'hide' });
}
