/**
 * Model provider settings end to end, the way a person meets them: `agentplane serve` on a
 * fresh data dir, the fake Anthropic server (wire-faithful, tests/doubles) standing in for the
 * provider, then
 * - the built CLI: `providers set anthropic --key-stdin` with the key piped in (never in argv;
 *   `--key` refused), `providers test` ok and, for a model the fake answers 401 to, the
 *   provider's own message without the key (then list and remove through the plane's API);
 * - Debian's Chromium on the printed URL: the Settings view's form saves a key (the field is
 *   cleared after), "Test connection" shows the latency, the fake's 401 shows in its words, and
 *   Remove (after asking) leaves the provider unconfigured.
 * Throughout, the key appears in no stdout, stderr, page text, plane.log or journal byte: only
 * in the 0600 providers.json, which is where it is kept headless.
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, FAKE_ANTHROPIC_MODEL, type FakeAnthropicServer } from '../tests/doubles/fake-anthropic-server';
import type { ProvidersList } from '../src-shared/protocol/providers';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, callCommand, makeTempDir, requireBuild, runCli, startServe, type CliRun, type ServeProcess } from './support/serve-process';
import { expectConnection, POLL, sectionButton, sectionHeading } from './support/shell-checks';
import { cleanScreenshot, seriousAxeViolations, UI_SCREENSHOTS } from './support/ui-checks';

const CLI_KEY = 'sk-ant-api03-e2e-cli-key-1f2e3d4c5b6a';
const UI_KEY = 'sk-ant-api03-e2e-ui-key-9a8b7c6d5e4f';
/** The launch environment names no provider, whatever the developer's shell has. */
const NO_PROVIDER_ENV = { AGENTPLANE_ANTHROPIC_API_KEY: '', AGENTPLANE_ANTHROPIC_BASE_URL: '', AGENTPLANE_ANTHROPIC_MODEL: '' };

/** The built CLI with the launch environment above; `stdin` piped in and closed. */
function cli(args: string[], stdin?: string): Promise<CliRun> {
  return runCli(args, { env: NO_PROVIDER_ENV, timeoutMs: 30_000, ...(stdin !== undefined ? { stdin } : {}) });
}

describe('provider settings through the CLI and the Settings view', () => {
  let fake: FakeAnthropicServer;
  let plane: ServeProcess;
  let dataDir: string;
  let profileDir: string;
  let context: BrowserContext;
  let page: Page;

  /** Every byte the plane wrote in its data dir except the settings file (the journal, its WAL, plane.log…). */
  const planeBytes = () =>
    readdirSync(dataDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name !== 'providers.json')
      .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1'))
      .join('\n');

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    fake = await startFakeAnthropicServer();
    dataDir = makeTempDir('providers');
    plane = await startServe({ dataDir, env: NO_PROVIDER_ENV });
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { also: [() => fake?.close()], dirs: [profileDir, dataDir] });
  });

  it('sets a key from stdin, tests it, shows the provider’s 401 without the key, lists and removes it, from the CLI', async () => {
    const refused = await cli(['providers', 'set', 'anthropic', '--key', CLI_KEY, '--data-dir', dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--key is refused: a key on the command line is visible to every user in `ps`/);

    const set = await cli(['providers', 'set', 'anthropic', '--key-stdin', '--base-url', fake.baseUrl, '--model', 'claude-sonnet-4-5', '--data-dir', dataDir], `${CLI_KEY}\n`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`anthropic  configured  key …${CLI_KEY.slice(-4)} (settings)`);

    const ok = await cli(['providers', 'test', 'anthropic', '--data-dir', dataDir]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`anthropic: ok, ${FAKE_ANTHROPIC_MODEL} answered in \\d+ ms`));
    expect(fake.requests.at(-1)?.headers['x-api-key']).toBe(CLI_KEY);

    const unauthorized = await cli(['providers', 'test', 'anthropic', '--model', 'unauthorized', '--data-dir', dataDir]);
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toMatch(/401.*invalid x-api-key/);

    // The rest through the plane's API (each CLI process costs seconds of CI): what the CLI printed is what the plane holds.
    const list = await callCommand(plane, 'providers.list');
    const listed = (list.body as { value: ProvidersList }).value;
    expect(listed.providers.find((p) => p.id === 'anthropic')).toMatchObject({ configured: true, keySource: 'settings', baseUrl: fake.baseUrl });
    expect(JSON.stringify(listed)).not.toContain(CLI_KEY.slice(0, 12));
    expect(statSync(listed.file).mode & 0o777).toBe(0o600);
    expect(readFileSync(listed.file, 'utf8')).toContain(CLI_KEY);
    expect((await callCommand(plane, 'providers.remove', { provider: 'anthropic' })).body).toMatchObject({ value: { removed: true } });

    for (const run of [refused, set, ok, unauthorized]) {
      expect(run.stdout + run.stderr).not.toContain(CLI_KEY.slice(0, 12));
      expect(run.stdout + run.stderr).not.toContain(CLI_KEY.slice(-8));
    }
    expect(planeBytes()).not.toContain(CLI_KEY.slice(0, 12));
    expect(plane.stderr()).not.toContain(CLI_KEY.slice(0, 12));
  });

  it('saves a key in the Settings view, tests the connection, and shows the fake’s 401 in its words', async () => {
    mkdirSync(UI_SCREENSHOTS, { recursive: true });
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
    await expectConnection(page, 'Connected');
    await sectionButton(page, 'Settings').click();
    await sectionHeading(page, 'Settings').waitFor();

    const card = page.getByRole('main').getByRole('article', { name: 'Anthropic', exact: true });
    await card.getByText('Not configured', { exact: true }).waitFor();
    const form = card.getByRole('form', { name: 'Anthropic settings' });
    const key = form.getByLabel('API key', { exact: true });
    expect(await key.getAttribute('type')).toBe('password');
    expect(await key.inputValue()).toBe('');
    await key.fill(UI_KEY);
    await form.getByLabel('Base URL', { exact: true }).fill(fake.baseUrl);
    await form.getByLabel('Default model', { exact: true }).fill('claude-sonnet-4-5');
    await form.getByRole('button', { name: 'Save Anthropic settings' }).click();
    await card.getByText('Configured', { exact: true }).waitFor();
    await expect.poll(() => key.inputValue(), POLL).toBe('');
    await card.getByText(`set (…${UI_KEY.slice(-4)})`).waitFor();

    const result = card.getByRole('status', { name: 'Anthropic connection test' });
    await card.getByRole('button', { name: 'Test connection to Anthropic' }).click();
    await expect.poll(() => result.textContent(), POLL).toMatch(new RegExp(`^OK: ${FAKE_ANTHROPIC_MODEL} answered in \\d+ ms$`));
    expect(fake.requests.at(-1)?.headers['x-api-key']).toBe(UI_KEY);

    await card.getByLabel('Model to test', { exact: true }).fill('unauthorized');
    await card.getByRole('button', { name: 'Test connection to Anthropic' }).click();
    await expect.poll(() => result.textContent(), POLL).toMatch(/^Failed: .*401.*invalid x-api-key/);

    await cleanScreenshot(page, 'ui-settings');
    const findings = await seriousAxeViolations(page, 'settings');
    expect(findings, JSON.stringify(findings, null, 2)).toEqual([]);
    const pageText = await page.content();
    expect(pageText).not.toContain(UI_KEY.slice(0, 12));
    expect(pageText).not.toContain(UI_KEY.slice(-8));
    expect(planeBytes()).not.toContain(UI_KEY.slice(0, 12));

    // Remove asks first, then the provider is unconfigured at once (no restart).
    await form.getByRole('button', { name: 'Remove the saved Anthropic settings…' }).click();
    await form.getByRole('button', { name: 'Yes, remove' }).click();
    await card.getByText('Not configured', { exact: true }).waitFor();
    expect(readFileSync(join(dataDir, 'providers.json'), 'utf8')).not.toContain(UI_KEY);
  });
  it('forgets a subject by click: sealing on, a hold refuses the erasure in the plane’s words, lifted, the subject erased', async () => {
    await sectionButton(page, 'Settings').click();
    const section = page.getByRole('main').getByRole('region', { name: 'Forgetting a subject', exact: true });
    const sealing = section.getByRole('status', { name: 'Sealing', exact: true });
    await expect.poll(async () => (await sealing.textContent()) ?? '', POLL).toMatch(/written in the clear/);
    await sealing.getByRole('button', { name: 'Seal new payloads', exact: true }).click();
    await expect.poll(async () => (await sealing.textContent()) ?? '', POLL).toMatch(/sealed under their owner’s key/);

    const started = await callCommand(plane, 'runs.start', { agent: 'summarize', input: { text: 'a secret worth forgetting' }, wait: true });
    const run = (started.body as { value: { runId: string; outcome: string } }).value;
    expect(run.outcome).toBe('succeeded');
    const records = (await callCommand(plane, 'journal.records', { runId: run.runId })).body as { value: { records: Array<{ body: { owner?: string } }> } };
    const subject = records.value.records[0]!.body.owner!;

    const hold = section.getByRole('form', { name: 'Place a legal hold', exact: true });
    await hold.getByLabel('Subject', { exact: true }).fill(subject);
    await hold.getByLabel('Reason', { exact: true }).fill('litigation');
    await hold.getByRole('button', { name: 'Place hold', exact: true }).click();
    const holds = section.getByRole('list', { name: 'Legal holds in force', exact: true });
    await expect.poll(async () => (await holds.textContent()) ?? '', POLL).toContain(`${subject} by`);

    const erase = section.getByRole('form', { name: 'Erase a subject', exact: true });
    await erase.getByLabel('Subject to erase', { exact: true }).fill(subject);
    await erase.getByLabel('Reason', { exact: true }).fill('asked to be forgotten');
    await erase.getByRole('button', { name: 'Erase…', exact: true }).click();
    await section.getByRole('status', { name: 'Erasure to confirm', exact: true }).waitFor();
    const findings = await seriousAxeViolations(page, 'settings-erasure');
    expect(findings, JSON.stringify(findings, null, 2)).toEqual([]);
    await erase.getByRole('button', { name: `Erase ${subject} for good`, exact: true }).click();
    const refusal = section.getByRole('alert');
    await expect.poll(async () => (await refusal.textContent()) ?? '', POLL).toMatch(/hold.*litigation|litigation.*hold/);

    await holds.getByRole('button', { name: `Lift the hold on ${subject}`, exact: true }).click();
    await section.getByText('No hold is in force.', { exact: true }).waitFor();
    await erase.getByRole('button', { name: 'Erase…', exact: true }).click();
    await erase.getByRole('button', { name: `Erase ${subject} for good`, exact: true }).click();
    const last = section.getByRole('status', { name: 'Last erasure', exact: true });
    await expect.poll(async () => (await last.textContent()) ?? '', POLL).toMatch(new RegExp(`^Erased ${subject.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} on .* key`));
    const after = await callCommand(plane, 'runs.get', { runId: run.runId });
    expect(JSON.stringify(after.body)).not.toContain('a secret worth forgetting');
  });
});
