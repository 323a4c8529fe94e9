/**
 * Remote A2A agents and outbound connections in the UI, the way a person meets them:
 * `agentplane serve` on a fresh data dir with an agent whose `a2a` step calls an @a2a-js/sdk
 * server on 127.0.0.1 (in this process), then Debian's Chromium on the printed URL:
 * - the Remote agents view explains itself while no run has called out;
 * - Settings → Outbound connections: a malformed origin is refused in the plane's words; the
 *   remote's origin is allowed (netguard refuses loopback otherwise) and listed with Remove;
 * - a run calls the remote; the Remote agents view lists it by its card's name, unsigned, with
 *   the remote task linked to the local run (the link opens that run);
 * - Remove takes the origin off the list. Both views are axe clean.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkRemote, type SdkRemote } from '../tests/doubles/sdk-a2a-remote';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, callCommand, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { expectConnection, expectSectionShown, POLL, sectionButton } from './support/shell-checks';
import { seriousAxeViolations } from './support/ui-checks';

/** The SDK test remote (tests/doubles/sdk-a2a-remote.ts): its agent answers `{echoed: <input>}` as one artifact, at once. */
function startRemote(): Promise<SdkRemote> {
  return startSdkRemote({ name: 'Echo agent', answer: (input) => ({ echoed: input }) });
}

describe('remote A2A agents and outbound connections in the UI', () => {
  let remote: SdkRemote;
  let plane: ServeProcess;
  let dataDir: string;
  let profileDir: string;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    remote = await startRemote();
    dataDir = makeTempDir('remote-agents');
    mkdirSync(join(dataDir, 'agents'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(dataDir, 'agents', 'ask-echo.yaml'),
      `name: ask-echo
description: Asks the remote echo agent.
input:
  type: object
  required: [text]
  properties:
    text: { type: string }
steps:
  - as: remote
    a2a: { card: "${remote.cardUrl}", skill: echo, message: { said: "{{input.text}}" } }
  - output: "{{steps.remote.value}}"
grants:
  - { kind: a2a, name: "${remote.cardUrl}" }
budget:
  maxEffects: 3
`,
      { mode: 0o600 },
    );
    plane = await startServe({ dataDir });
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, {
      also: [
        () => remote?.close(),
      ],
      dirs: [profileDir, dataDir],
    });
  });

  it('allows the remote’s origin in Settings, lists the remote and its task after a run, and removes the origin', async () => {
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
    await expectConnection(page, 'Connected');
    const main = page.getByRole('main');

    // Nothing called out yet: the view says what will appear.
    await sectionButton(page, 'Remote agents').click();
    await expectSectionShown(page, 'Remote agents');
    expect(await seriousAxeViolations(page, 'remote-agents-empty')).toEqual([]);

    await sectionButton(page, 'Settings').click();
    const outbound = main.getByRole('region', { name: 'Outbound connections', exact: true });
    await outbound.getByText('Nothing is allowed beyond the public internet.').waitFor();
    const field = outbound.getByLabel('Origin to allow', { exact: true });
    await field.fill('ftp://example.com');
    await outbound.getByRole('button', { name: 'Allow', exact: true }).click();
    await expect.poll(async () => (await outbound.getByRole('alert').textContent()) ?? '', POLL).toMatch(/ftp/);
    await field.fill(remote.origin);
    await outbound.getByRole('button', { name: 'Allow', exact: true }).click();
    const allowed = outbound.getByRole('list', { name: 'Allowed origins' });
    await allowed.getByText(remote.origin, { exact: true }).waitFor();
    await expect.poll(() => field.inputValue(), POLL).toBe('');
    expect(await seriousAxeViolations(page, 'settings-outbound')).toEqual([]);

    const started = await callCommand(plane, 'runs.start', { agent: 'ask-echo', input: { text: 'hi' }, wait: true });
    const run = (started.body as { value: { runId: string; outcome: string } }).value;
    expect(run.outcome, JSON.stringify(started.body)).toBe('succeeded');

    await sectionButton(page, 'Remote agents').click();
    const card = main.getByRole('article', { name: 'Echo agent', exact: true });
    await card.waitFor();
    await card.getByText('Unsigned', { exact: true }).waitFor();
    await card.getByText('echoes its input', { exact: true }).waitFor();
    const tasks = card.getByRole('list', { name: 'Tasks of Echo agent' });
    await expect.poll(() => tasks.getByRole('listitem').count(), POLL).toBe(1);
    await tasks.getByText('completed', { exact: true }).waitFor();
    expect(await seriousAxeViolations(page, 'remote-agents')).toEqual([]);
    await tasks.getByRole('link', { name: `Open run ${run.runId} (ask-echo, step 0)` }).click();
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe(`#/runs/${run.runId}`);

    await sectionButton(page, 'Settings').click();
    await outbound.getByRole('button', { name: `Remove ${remote.origin} from the allow list` }).click();
    await outbound.getByText('Nothing is allowed beyond the public internet.').waitFor();
  });
});
