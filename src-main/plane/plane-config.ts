/**
 * What a plane runs with, read from files: agent manifests (the bundled defaults in
 * resources/agents, plus the person's own in <data dir>/agents), the policy (<data dir>/policy.json
 * when present, else the bundled default), and model providers (the local deterministic one
 * always; an OpenAI-compatible server when AGENTPLANE_OPENAI_BASE_URL is set, its key from
 * AGENTPLANE_OPENAI_API_KEY, which never leaves the Authorization header).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAgentsFrom, ManifestError, type LoadedAgent } from '../runtime/manifest';
import { PolicyEngine } from '../runtime/policy';
import type { ModelProvider } from '../runtime/model-provider';
import { createLocalProvider } from '../providers/local-provider';
import { createOpenAiCompatibleProvider } from '../providers/openai-compatible';
import { appRoot } from '../base/app-paths';

export function resourcesDir(): string {
  return join(appRoot(), 'resources');
}

export function loadAgents(dataDir: string): LoadedAgent[] {
  const bundled = loadAgentsFrom(join(resourcesDir(), 'agents'));
  const ownDir = join(dataDir, 'agents');
  const own = existsSync(ownDir) ? loadAgentsFrom(ownDir) : [];
  const names = new Map(bundled.map((a) => [a.manifest.name, a.source]));
  for (const agent of own) {
    const clash = names.get(agent.manifest.name);
    if (clash) throw new ManifestError(`${agent.source}: an agent named ${agent.manifest.name} is already declared in ${clash}`);
  }
  return [...bundled, ...own];
}

export function loadPolicy(dataDir: string): PolicyEngine {
  const own = join(dataDir, 'policy.json');
  const source = existsSync(own) ? own : join(resourcesDir(), 'policy.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(source, 'utf8'));
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${(error as Error).message})`);
  }
  return PolicyEngine.parse(raw, source);
}

export function loadProviders(env: NodeJS.ProcessEnv = process.env): Map<string, ModelProvider> {
  const providers = new Map<string, ModelProvider>();
  const local = createLocalProvider();
  providers.set(local.id, local);
  const baseUrl = env.AGENTPLANE_OPENAI_BASE_URL;
  if (baseUrl) {
    const provider = createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl,
      ...(env.AGENTPLANE_OPENAI_API_KEY ? { apiKey: env.AGENTPLANE_OPENAI_API_KEY } : {}),
      ...(env.AGENTPLANE_OPENAI_MODEL ? { model: env.AGENTPLANE_OPENAI_MODEL } : {}),
    });
    providers.set(provider.id, provider);
  }
  return providers;
}
