/**
 * Shared by the runtime's tests: a plane on a temporary data dir with the bundled agents (or
 * given ones), and a model provider that counts its calls in a file, so "performed exactly
 * once" can be checked across processes.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { Completion, ModelProvider, ModelRequest } from '../../src-main/runtime/model-provider';
import { createLocalProvider } from '../../src-main/providers/local-provider';
import { createPlane, type Plane, type PlaneConfig } from '../../src-main/plane/plane';
import { createPlaneClient, type PlaneClient } from '../../src-shared/ipc/client';
import type { CommandName, CommandRequest, CommandResponse } from '../../src-shared/ipc/contract';
import type { ErrorBody } from '../../src-shared/ipc/errors';
import { inProcessTransport } from '../../src-main/plane/serve-contract';
import { runDrafts, tempDataDir } from './journal-support';
import { silentLogger } from '../../src-main/base/logger';
import { Journal } from '../../src-main/journal/journal';
import { loadPolicy } from '../../src-main/plane/plane-config';
import { Runtime } from '../../src-main/runtime/runtime';
import { builtinTools, workspaceOf } from '../../src-main/runtime/tools';
import { compileAgent, type LoadedAgent } from '../../src-main/runtime/manifest';

export async function testPlane(overrides: Partial<PlaneConfig> = {}): Promise<Plane> {
  return createPlane({ dataDir: overrides.dataDir ?? tempDataDir('ap-runtime-'), version: 'test', host: 'headless', ...overrides });
}

const clients = new WeakMap<Plane, PlaneClient>();

/**
 * The contract client every test reaches a plane through: an in-memory linked pair served by
 * `serveContract`, so requests and replies cross as JSON and every reply is checked against the
 * contract, exactly as for the renderer and the CLI. One per plane, made on first use.
 */
export function clientOf(plane: Plane): PlaneClient {
  let client = clients.get(plane);
  if (!client) {
    client = createPlaneClient(inProcessTransport(plane));
    clients.set(plane, client);
  }
  return client;
}

/** Runs a command; a refusal throws ContractError (with its `code`). */
export function call<K extends CommandName>(plane: Plane, command: K, request: CommandRequest<K>): Promise<CommandResponse<K>> {
  return clientOf(plane).call(command, request);
}

/** Runs a command that must be refused, and answers the refusal. */
export async function failure<K extends CommandName>(plane: Plane, command: K, request: CommandRequest<K>): Promise<ErrorBody> {
  const result = await clientOf(plane).tryCall(command, request);
  if (result.ok) throw new Error(`${command} was expected to fail but answered ${JSON.stringify(result.value).slice(0, 200)}`);
  return result.error;
}

/** Approves the run's pending wait (its exact subject) and waits for the run to settle again. */
/**
 * Polls `read` until it answers something (a state no call waits for: a run moving on after a
 * decision, an inbox listing a request), failing after `ms` naming `what`.
 */
export async function until<T>(read: () => Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function approvePending(plane: Plane, runId: string) {
  const run = await call(plane, 'runs.get', { runId });
  await call(plane, 'approvals.decide', { runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
  return plane.runtime.settled(runId);
}

/** The local provider, with every call appended to `counterFile` (one line per call). */
export function countingProvider(counterFile: string, gate?: () => Promise<void>): ModelProvider {
  const local = createLocalProvider();
  return {
    id: local.id,
    profile: local.profile,
    pricing: local.pricing,
    async complete(request: ModelRequest): Promise<Completion> {
      appendFileSync(counterFile, `${request.messages.at(-1)?.content.slice(0, 40) ?? ''}\n`);
      if (gate) await gate();
      return local.complete(request);
    },
  };
}

export function callsIn(counterFile: string): number {
  return existsSync(counterFile) ? readFileSync(counterFile, 'utf8').split('\n').filter(Boolean).length : 0;
}

export function agent(manifest: Record<string, unknown>): LoadedAgent {
  return compileAgent({ description: 'test agent', input: { type: 'object' }, ...manifest }, `test:${String(manifest.name)}`);
}

/**
 * A bare runtime (no agents) over a fresh journal holding `runs` ([runId, effects], written with
 * runDrafts), its folded-history cache bounded at `historyCacheRecords`. The journal and the
 * runtime are pushed onto `open`, for the caller's afterEach to close in reverse.
 */
export async function runtimeOverRuns(runs: Array<[string, number]>, historyCacheRecords: number, open: Array<{ close(): Promise<void> }>): Promise<Runtime> {
  const dataDir = tempDataDir('ap-runtime-over-');
  const journal = await Journal.open({ dataDir });
  open.push(journal);
  for (const [runId, effects] of runs) await journal.appendBatch(runDrafts(runId, effects));
  const runtime = await Runtime.create({
    journal,
    agents: [],
    policy: loadPolicy(dataDir),
    providers: new Map([['local', createLocalProvider()]]),
    tools: builtinTools,
    toolContext: { workspace: workspaceOf(dataDir) },
    logger: silentLogger,
    historyCacheRecords,
  });
  open.push(runtime);
  return runtime;
}
