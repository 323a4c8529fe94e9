/**
 * What a failed peer hop means, against a real process on a real socket. Once the request has
 * left, a failure is InDoubt and goes to a person (the recovery queue), never DidNotHappen: a
 * peer that timed out or dropped mid-answer may have done the work, and a quiet retry could
 * do it twice. Only a failure before sending, or a refusal the peer made before running
 * anything, is DidNotHappen; a skill that ran and failed Landed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { tempDataDir } from '../../tests/support/journal-support';
import { silentLogger } from '../base/logger';
import { loadAgents, loadPolicy } from '../plane/plane-config';
import { appRoot } from '../base/app-paths';
import { PeerRegistry } from './peer-registry';
import { createPeerCaller } from './peer-caller';
import { createNetguard, staticAllowList } from '../net/netguard';
import { createLocalProvider } from '../providers/local-provider';
import { Runtime } from '../runtime/runtime';
import { builtinTools, workspaceOf } from '../runtime/tools';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function misbehavingPeer(mode: string, countFile: string): Promise<number> {
  const child = spawn(process.execPath, [join(appRoot(), 'tests', 'doubles', 'misbehaving-peer.mjs'), mode], { env: { ...process.env, COUNT_FILE: countFile }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /PORT=(\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`misbehaving peer exited ${code}`)));
  });
}

/** A port nothing listens on: bound, read, released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

let dataDir: string;
let journal: Journal;
let runtime: Runtime;
let port = 0;
/** What token issuers would be reached through: none is configured here, so nothing is allowed. */
const netguard = createNetguard({ allow: staticAllowList([]) });

beforeAll(async () => {
  dataDir = tempDataDir('ap-peer-dispositions-');
  const registry = new PeerRegistry(dataDir);
  registry.create({ id: 'beta', name: 'Beta', port: 0, publicIp: '127.0.0.1' });
  journal = await Journal.open({ dataDir });
  runtime = await Runtime.create({
    journal,
    agents: loadAgents(dataDir).filter((a) => a.manifest.name === 'ask-peer'),
    policy: loadPolicy(dataDir),
    providers: new Map([['local', createLocalProvider()]]),
    tools: builtinTools,
    toolContext: { workspace: workspaceOf(dataDir) },
    logger: silentLogger,
    peers: createPeerCaller({ registry, portOf: () => port, timeoutMs: 700, netguard }),
  });
});

afterAll(async () => {
  await runtime.close();
  await netguard.close();
  await journal.close();
});

async function askThrough(mode: string | null): Promise<{ failed: { disposition: string; error: { code: string; message: string } }; pending: string | null; requestsSeen: number }> {
  const countFile = join(dataDir, `count-${mode ?? 'closed'}-${Math.random().toString(36).slice(2)}`);
  port = mode === null ? await closedPort() : await misbehavingPeer(mode, countFile);
  const { runId } = await runtime.start({ agent: 'ask-peer', input: { query: 'did it happen?' }, chain: ['user:local'], via: 'cli' });
  const history = await runtime.settled(runId);
  const records = await journal.readRun(runId, 1, 100);
  const failed = records.find((r) => r.kind === 'EffectFailed');
  expect(failed, `no EffectFailed for ${mode}`).toBeDefined();
  return {
    failed: failed!.body as never,
    pending: history.pending?.reason ?? null,
    requestsSeen: existsSync(countFile) ? readFileSync(countFile, 'utf8').split('\n').filter(Boolean).length : 0,
  };
}

describe('a failed peer hop is disposed of by what the wire said', () => {
  it('no connection at all: DidNotHappen, nothing reached anybody', async () => {
    const outcome = await askThrough(null);
    expect(outcome.failed).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'PeerUnreachable' } });
    expect(outcome.pending).toBeNull();
  });

  it.each([
    ['stall-headers', /gave no answer/],
    ['stall-body', /broken answer|gave no answer/],
    ['reset-mid-body', /broken answer|gave no answer/],
    ['bad-gateway', /HTTP 502/],
    ['not-jsonrpc', /not a JSON-RPC response/],
  ])('%s after the request left: InDoubt, waiting in the recovery queue', async (mode, message) => {
    const outcome = await askThrough(mode);
    expect(outcome.requestsSeen).toBe(1);
    expect(outcome.failed).toMatchObject({ disposition: 'InDoubt', error: { code: 'PeerNoAnswer' } });
    expect(outcome.failed.error.message).toMatch(message);
    expect(outcome.pending).toBe('recovery');
  });

  it('a request the peer refused before running it (429, -32602): DidNotHappen', async () => {
    const limited = await askThrough('rate-limited');
    expect(limited.failed).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'PeerRefused' } });
    const params = await askThrough('bad-params');
    expect(params.failed).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'PeerCall' } });
    expect(params.pending).toBeNull();
  });

  it('a skill that ran and failed: Landed, not repeated', async () => {
    const outcome = await askThrough('skill-failed');
    expect(outcome.failed).toMatchObject({ disposition: 'Landed', error: { code: 'PeerCall' } });
    expect(outcome.pending).toBeNull();
  });
});
