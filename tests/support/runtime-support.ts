/**
 * Shared by the runtime's tests: a plane on a temporary data dir with the bundled agents (or
 * given ones), and a model provider that counts its calls in a file, so "performed exactly
 * once" can be checked across processes.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { Completion, ModelProvider, ModelRequest } from '../../src-main/runtime/model-provider';
import { createLocalProvider } from '../../src-main/providers/local-provider';
import { createPlane, type Plane, type PlaneConfig } from '../../src-main/plane/plane';
import type { RunView } from '../../src-shared/ipc/contract';
import { tempDataDir } from './journal-support';
import { compileAgent, type LoadedAgent } from '../../src-main/runtime/manifest';

export async function testPlane(overrides: Partial<PlaneConfig> = {}): Promise<Plane> {
  return createPlane({ dataDir: overrides.dataDir ?? tempDataDir('ap-runtime-'), version: 'test', host: 'headless', ...overrides });
}

export async function call<T = RunView>(plane: Plane, command: string, request: unknown): Promise<T> {
  const result = await plane.dispatch(command, request, { transport: 'local' });
  if (!result.ok) throw Object.assign(new Error(result.error.message), { code: result.error.code });
  return result.value as T;
}

export async function failure(plane: Plane, command: string, request: unknown): Promise<{ code: string; message: string }> {
  const result = await plane.dispatch(command, request, { transport: 'local' });
  if (result.ok) throw new Error(`${command} was expected to fail but answered ${JSON.stringify(result.value).slice(0, 200)}`);
  return result.error;
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
