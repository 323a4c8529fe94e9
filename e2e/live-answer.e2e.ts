/**
 * A model's answer streaming into the timeline, the way a person watches it: `agentplane serve`
 * with its chat provider pointed at the wire-faithful chat fake (which types its answer one word
 * every 75 ms), Debian's Chromium on the printed URL, the run's timeline open while the model
 * answers. Part of the answer shows under the timeline, labelled as live and not yet journaled,
 * while the run is still running; once the effect is sealed the live text is gone and the
 * journaled answer is the run's result.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../src-shared/ipc/contract';
import { FAKE_SLOW_DELTAS, startFakeChatServer, type FakeChatServer } from '../tests/doubles/fake-chat-server';
import { launchChromium, requireChromium } from './support/chromium';
import { closeServeAndBrowser, callCommand, makeTempDir, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { expectConnection, POLL } from './support/shell-checks';

const AGENT = `name: streamer
description: Answers at length, one word at a time.
input: { type: object }
steps:
  - as: answer
    model: { provider: chat, model: slow-stream, prompt: "Count your words for me.", maxTokens: 200 }
  - output: "{{steps.answer.text}}"
grants:
  - { kind: model, name: chat }
`;

describe('a streaming answer in the timeline, in Chromium', () => {
  let fake: FakeChatServer;
  let plane: ServeProcess;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let profileDir: string;

  async function command<T>(name: string, request: unknown = {}): Promise<T> {
    const answer = await callCommand(plane, name, request);
    if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return (answer.body as { value: T }).value;
  }

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    fake = await startFakeChatServer();
    dataDir = makeTempDir('live-answer');
    mkdirSync(join(dataDir, 'agents'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, 'agents', 'streamer.yaml'), AGENT, { mode: 0o600 });
    plane = await startServe({ dataDir, env: { AGENTPLANE_OPENAI_BASE_URL: fake.baseUrl } });
    profileDir = makeTempDir('chromium-profile');
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(plane.url);
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, plane, { also: [() => fake?.close()], dirs: [profileDir, dataDir] });
  });

  it('shows part of the answer, labelled live and not yet journaled, before the run seals; the sealed effect replaces it', async () => {
    await expectConnection(page, 'Connected');
    const run = await command<RunView>('runs.start', { agent: 'streamer', input: {} });
    await page.evaluate((hash) => (globalThis as unknown as { location: { hash: string } }).location.hash = hash, `#/runs/${run.runId}`);
    const region = page.getByRole('region', { name: 'Streaming model answer', exact: true });
    expect(await region.getAttribute('aria-live')).toBe('polite');

    // Part of the answer, while the run is still running.
    await region.getByText('word3', { exact: false }).waitFor({ timeout: 10_000 });
    const partial = ((await region.textContent()) ?? '').replace(/\s+/g, ' ');
    const during = await command<RunView>('runs.get', { runId: run.runId });
    expect(during.status).toBe('running');
    expect(partial).toContain('not yet journaled');
    expect(partial).toContain('untrusted model output');
    expect(partial).toContain('model chat:slow-stream');
    expect(partial).not.toContain(FAKE_SLOW_DELTAS.at(-1)!.trim());

    // The sealed effect is the answer now: the live text is gone, the result holds every word.
    await expect.poll(async () => (await command<RunView>('runs.get', { runId: run.runId })).status, { timeout: 15_000, interval: 100 }).toBe('sealed');
    await expect.poll(async () => ((await region.textContent()) ?? '').trim(), POLL).toBe('');
    const sealed = await command<RunView>('runs.get', { runId: run.runId });
    expect(sealed).toMatchObject({ outcome: 'succeeded', result: FAKE_SLOW_DELTAS.join('') });
    await page.getByRole('listbox', { name: /^Timeline of run-/ }).getByText('Effect done', { exact: false }).first().waitFor(POLL);
  });
});
