/**
 * One bad agent file does not stop `agentplane serve` (first-hour issue): with a manifest that
 * has no `input` in <data dir>/agents the plane starts, the CLI lists the file as broken with
 * the field and the fix (`agents list`, its `--json`), `run bad` says the agent is broken and
 * why, and the other agents run. A file added while the plane runs is picked up without a
 * restart, `agents reload` reports, and the browser UI shows the broken agents where runs are
 * started, updated live when another file breaks. Real processes, the built CLI, Chromium.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, makeTempDir, requireBuild, runCli, startServe, type ServeProcess } from './support/serve-process';
import { expectConnection, POLL, sectionButton, sectionHeading } from './support/shell-checks';

const BAD = 'name: bad\ndescription: has no input schema\nsteps:\n  - model: { provider: local, prompt: hi }\ngrants:\n  - { kind: model, name: local }\n';
const good = (name: string) => `name: ${name}\ndescription: says hi\ninput: { type: object }\nsteps:\n  - model: { provider: local, prompt: hi }\ngrants:\n  - { kind: model, name: local }\n`;

describe('agent files: a broken one is shown, not fatal; new ones are picked up while serve runs', () => {
  let plane: ServeProcess;
  let client: PlaneClient;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let own: string;
  let profileDir: string;
  const dd = () => ['--data-dir', dataDir];

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    dataDir = makeTempDir('agent-files');
    own = join(dataDir, 'agents');
    mkdirSync(own, { mode: 0o700 });
    writeFileSync(join(own, 'bad.yaml'), BAD, { mode: 0o600 });
    writeFileSync(join(own, 'good.yaml'), good('good'), { mode: 0o600 });
    plane = await startServe({ dataDir });
    client = createPlaneClient(createHttpTransport({ url: plane.origin, token: plane.token }));
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir, {});
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { dirs: [profileDir, dataDir] });
  });

  it('serve starts; the CLI lists the broken file with the field and the fix, refuses it by name, and runs the good agent', async () => {
    const human = await runCli(['agents', 'list', ...dd()], { timeoutMs: 30_000 });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^good\s+says hi$/m);
    expect(human.stdout).toMatch(/^bad\s+BROKEN: .*bad\.yaml$/m);
    expect(human.stdout).toContain('input: the manifest has no input schema: add `input:`');

    const json = await runCli(['agents', 'list', '--json', ...dd()], { timeoutMs: 30_000 });
    const listed = JSON.parse(json.stdout) as { ok: boolean; result: { agents: Array<{ name: string }>; broken: Array<{ name: string; source: string; field: string; problem: string }> } };
    expect(listed.result.agents.map((a) => a.name)).toContain('good');
    expect(listed.result.broken).toEqual([expect.objectContaining({ name: 'bad', source: join(own, 'bad.yaml'), field: 'input', problem: expect.stringContaining('no input schema') })]);

    const refused = await runCli(['run', 'bad', ...dd()], { timeoutMs: 30_000 });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/agent bad is broken: .*bad\.yaml: input: the manifest has no input schema/);
    expect(refused.stderr).not.toContain('no agent named');

    const ran = await runCli(['run', 'good', '--wait', ...dd()], { timeoutMs: 30_000 });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/good\s+succeeded/);
  });

  it('a file added while serve runs becomes runnable without a restart; `agents reload` reports', async () => {
    writeFileSync(join(own, 'later.yaml'), good('later'), { mode: 0o600 });
    await expect.poll(async () => (await client.call('agents.list', {})).agents.map((a) => a.name), POLL).toContain('later');
    const ran = await runCli(['run', 'later', '--wait', ...dd()], { timeoutMs: 30_000 });
    expect(ran.code).toBe(0);

    const reload = await runCli(['agents', 'reload', ...dd()], { timeoutMs: 30_000 });
    expect(reload.code).toBe(0);
    expect(reload.stdout).toMatch(/^broken: bad \(.*bad\.yaml\): input: the manifest has no input schema/m);
    const json = await runCli(['agents', 'reload', '--json', ...dd()], { timeoutMs: 30_000 });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, result: { added: [], changed: [], removed: [], broken: [{ name: 'bad', field: 'input' }] } });
  });

  it('the UI shows the broken agents where runs are started, and a file that breaks while the page is open appears there', async () => {
    await page.goto(plane.url);
    await expectConnection(page, 'Connected');
    await sectionButton(page, 'Runs').click();
    await sectionHeading(page, 'Runs').waitFor();
    await page.getByRole('main').getByRole('button', { name: 'Start a run', exact: true }).click();
    const form = page.getByRole('form', { name: 'Start a run' });
    const broken = form.getByRole('region', { name: 'Broken agent files' });
    await expect.poll(() => broken.textContent(), POLL).toContain('bad');
    const text = (await broken.textContent()) ?? '';
    expect(text).toContain(join(own, 'bad.yaml'));
    expect(text).toContain('input: the manifest has no input schema: add `input:`');
    // Listed in the agent picker too, and not to be picked.
    const option = form.getByLabel('Agent').locator('option', { hasText: 'bad (broken)' });
    expect(await option.count()).toBe(1);
    expect(await option.isDisabled()).toBe(true);

    writeFileSync(join(own, 'worse.yaml'), 'name: worse\ndescription: [unclosed\n', { mode: 0o600 });
    await expect.poll(() => broken.textContent(), POLL).toMatch(/worse.*not valid YAML at line \d+/);
  });
});
