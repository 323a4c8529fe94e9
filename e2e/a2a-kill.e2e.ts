/**
 * A plane killed (SIGKILL: no close, no cleanup) while a run follows a remote A2A task, and the
 * run is not lost: the built `agentplane serve` on a fresh data dir, the remote an @a2a-js/sdk
 * server on 127.0.0.1 in this process (its origin allowed with `agentplane net allow`, as a
 * person would), whose task works until the test releases it.
 *
 * What must hold across the kill (runtime/a2a-effect.ts; docs/GOVERNED-RUNTIME.md, "A2A, calling
 * out"): the message was sent exactly
 * once (the remote counts its SendMessage receipts), and the send's journaled result (the remote
 * task's id and interface) lets the restarted plane re-attach to that task by its id — the
 * follow effect is resumable, its reads safe to repeat — so the run completes with the remote's
 * answer without a person: nothing in doubt, no recovery asked for, one EffectStarted per step.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkRemote, type SdkRemote } from '../tests/doubles/sdk-a2a-remote';
import { callCommand, childEnv, CLI, makeTempDir, REPO_ROOT, requireBuild, startServe, stopWith, type ServeProcess } from './support/serve-process';

interface JournalRecordView {
  kind: string;
  body: { effect?: string; name?: string; disposition?: string };
}

const planes: ServeProcess[] = [];
const dirs: string[] = [];
let remote: SdkRemote | undefined;
beforeAll(() => requireBuild());
afterAll(async () => {
  for (const p of planes) {
    if (p.child.exitCode === null && p.child.signalCode === null) await stopWith(p, 'SIGTERM', 15_000).catch(() => undefined);
    p.dispose();
  }
  await remote?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One contract command through the plane's web bridge; its value, or a failure naming the answer. */
async function command<T>(plane: ServeProcess, name: string, request: unknown): Promise<T> {
  const answer = await callCommand(plane, name, request);
  if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return (answer.body as { value: T }).value;
}

async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 8_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a plane killed while a run follows a remote A2A task', () => {
  it('re-attaches to the task by its id after a restart and completes: sent once, no person asked', { timeout: 30_000 }, async () => {
    remote = await startSdkRemote({ behaviour: 'forever', streaming: true, answer: (input) => ({ echoed: input }) });
    const dataDir = makeTempDir('a2a-kill');
    dirs.push(dataDir);
    mkdirSync(join(dataDir, 'agents'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(dataDir, 'agents', 'ask-remote.yaml'),
      `name: ask-remote
description: Asks the remote agent and waits for its task.
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
`,
      { mode: 0o600 },
    );
    const allowed = spawnSync(process.execPath, [CLI, 'net', 'allow', remote.origin, '--data-dir', dataDir], { cwd: REPO_ROOT, env: childEnv(), encoding: 'utf8' });
    expect(allowed.stdout.trim(), allowed.stderr).toBe(`allowed ${remote.origin}`);

    const first = await startServe({ dataDir });
    planes.push(first);
    const { runId } = await command<{ runId: string }>(first, 'runs.start', { agent: 'ask-remote', input: { text: 'survive' } });
    // The send is journaled and the follow is subscribed to the remote task: kill it now.
    await until('the plane subscribes to the remote task', () => remote!.methods.includes('SubscribeToTask'));
    first.child.kill('SIGKILL');
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
    const subscriptions = remote.methods.filter((m) => m === 'SubscribeToTask').length;

    const second = await startServe({ dataDir });
    planes.push(second);
    await until('the restarted plane follows the same task again', () => remote!.methods.filter((m) => m === 'SubscribeToTask').length > subscriptions);
    const following = await command<{ status: string; pending?: unknown }>(second, 'runs.get', { runId });
    expect(following.pending ?? null).toBeNull();
    expect(following.status).not.toBe('sealed');

    remote.release();
    await until('the run ends', async () => (await command<{ status: string }>(second, 'runs.get', { runId })).status === 'sealed');
    expect(await command(second, 'runs.get', { runId })).toMatchObject({ outcome: 'succeeded', result: { echoed: { said: 'survive' } } });
    // Sent exactly once, across the kill; the card was fetched once (for the send).
    expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(1);
    expect(remote.received).toEqual([{ said: 'survive' }]);
    expect(remote.methods.filter((m) => m === 'GET card')).toHaveLength(1);
    const { records } = await command<{ records: JournalRecordView[] }>(second, 'journal.records', { runId });
    expect(records.filter((r) => r.kind === 'EffectFailed' || r.kind === 'Suspended')).toEqual([]);
    expect(records.filter((r) => r.kind === 'EffectStarted').map((r) => r.body.name)).toEqual(['echo', expect.stringMatching(/^follow:/)]);
  });
});
