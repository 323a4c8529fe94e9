/**
 * What every host of the UI must show, checked the way a person with a screen reader or a
 * keyboard meets it: by role and accessible name (getByRole), never by CSS class. The Chromium
 * test (web bridge) and the Electron test (preload IPC) call the same functions, so the two
 * hosts are held to one standard.
 *
 * The section labels are written out here on purpose (they are the spec); the empty-state
 * sentences are imported from the renderer's section list, their one source, so copy edits
 * need no test edit while a section that shows another section's text still fails.
 */
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { sections } from '../../src-renderer/src/sections/sections';

export const SECTION_LABELS = ['Peers', 'Runs', 'Approvals', 'Spend', 'Sessions', 'Editor sessions', 'MCP', 'Settings', 'Remote agents'] as const;
export type SectionLabel = (typeof SECTION_LABELS)[number];

/** Waits for UI that updates asynchronously (events, reconnects) without fixed sleeps. */
export const POLL = { timeout: 10_000, interval: 50 };

export function emptyTextOf(label: SectionLabel): string {
  const section = sections.find((s) => s.label === label);
  if (!section) throw new Error(`the renderer has no section labelled ${label}`);
  return section.empty;
}

export const sectionsNav = (page: Page): Locator => page.getByRole('navigation', { name: 'Sections' });
export const sectionButton = (page: Page, label: SectionLabel): Locator =>
  sectionsNav(page).getByRole('button', { name: label, exact: true });
export const sectionHeading = (page: Page, label: SectionLabel): Locator =>
  page.getByRole('heading', { level: 1, name: label, exact: true });
export const connectionIndicator = (page: Page): Locator => page.getByRole('status', { name: 'Connection' });
export const planeVersion = (page: Page): Locator => page.getByLabel('Plane version', { exact: true });

/** The section marked aria-current="page", read from the accessibility attributes only. */
export async function currentSection(page: Page): Promise<string | null> {
  for (const label of SECTION_LABELS) {
    if ((await sectionButton(page, label).getAttribute('aria-current')) === 'page') return label;
  }
  return null;
}

/** The section is current, its heading names the main landmark, and its empty state shows. */
export async function expectSectionShown(page: Page, label: SectionLabel): Promise<void> {
  await expect.poll(() => currentSection(page), POLL).toBe(label);
  await sectionHeading(page, label).waitFor({ state: 'visible' });
  // <main aria-labelledby=heading>: the landmark's name is the section, so a screen reader's
  // landmark list says where the user is.
  await page.getByRole('main', { name: label, exact: true }).waitFor({ state: 'visible' });
  await page.getByRole('main').getByText(emptyTextOf(label), { exact: true }).waitFor({ state: 'visible' });
}

/** The nav landmark holds exactly the section buttons, in Alt+1…Alt+9 order. */
export async function expectShellRendered(page: Page): Promise<void> {
  await sectionsNav(page).waitFor({ state: 'visible' });
  await expect.poll(() => sectionsNav(page).getByRole('button').count(), POLL).toBe(SECTION_LABELS.length);
  for (const [index, label] of SECTION_LABELS.entries()) {
    const button = sectionButton(page, label);
    expect(await button.count(), `one "${label}" button in the Sections nav`).toBe(1);
    expect(await button.getAttribute('aria-keyshortcuts')).toBe(`Alt+${index + 1}`);
  }
  const current = await currentSection(page);
  expect(current, 'one section is current on first paint').not.toBeNull();
  await sectionHeading(page, current as SectionLabel).waitFor({ state: 'visible' });
}

/** Clicks through every section; `after` runs once each section is shown (screenshots). */
export async function visitEverySection(page: Page, after?: (label: SectionLabel) => Promise<void>): Promise<void> {
  for (const label of SECTION_LABELS) {
    await sectionButton(page, label).click();
    await expectSectionShown(page, label);
    if (after) await after(label);
  }
}

/** ArrowDown from a focused section button opens the next one; Alt+3 jumps to Approvals. */
export async function expectKeyboardNavigation(page: Page): Promise<void> {
  await sectionButton(page, 'Peers').click();
  await expectSectionShown(page, 'Peers');
  await sectionButton(page, 'Peers').focus();
  await page.keyboard.press('ArrowDown');
  await expectSectionShown(page, 'Runs');
  await page.keyboard.press('Alt+3');
  await expectSectionShown(page, 'Approvals');
}

/** The status bar shows the version the plane reported through the `plane.status` command. */
export async function expectVersionShown(page: Page, version: string): Promise<void> {
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // "AgentPlane 0.1.0" in Electron, "AgentPlane 0.1.0 · headless" through the web bridge.
  await expect.poll(() => planeVersion(page).textContent(), POLL).toMatch(new RegExp(`^AgentPlane ${escaped}( · headless)?$`));
}

export async function expectConnection(page: Page, text: 'Connected' | 'Reconnecting…' | 'Connecting…' | 'Disconnected'): Promise<void> {
  await expect.poll(async () => (await connectionIndicator(page).textContent())?.trim(), POLL).toBe(text);
}
