/**
 * A tool-calling agent end to end against each provider's fake, in a real plane process that is
 * killed with SIGKILL mid-loop and resumed by another on the same data dir.
 *
 * One data dir, four agents (one per provider: anthropic, openai, gemini, chat), each a model
 * step offering one MCP tool (`mcp:echo-<p>/echo`, a real stdio server counting every call that
 * reaches it) whose grant needs a person's approval. The plane runs in a child process configured
 * only by its environment (AGENTPLANE_<P>_API_KEY / _BASE_URL, a distinctive key per provider)
 * and its data dir (`agents/*.yaml`, the MCP servers file), as a person would set it up.
 *
 * 1. The first process starts all eight runs at once. Each fake answers a tool run's turn 1 with
 *    a tool call carrying its provider's opaque continuation (Anthropic's signed thinking block,
 *    OpenAI's encrypted reasoning item, Gemini's thought signature); the model effect is
 *    journaled and the run suspends before the tool, waiting for approval (the refused runs fail
 *    at once). Then the process is SIGKILLed.
 * 2. A second process approves every waiting run: turn 1 is replayed from the journal (the fake
 *    sees no second turn-1 request), the tool runs once, and turn 2 (the conversation with the
 *    continuation round-tripped from the journal, verbatim) gets the fake's final text. The
 *    Anthropic, OpenAI and Gemini fakes refuse a turn 2 whose continuation did not come back as
 *    sent, as their providers do.
 * 3. Asserted per provider: the run succeeded with the fake's final text; the fake saw exactly
 *    two requests; the tool was performed exactly once; each effect started exactly once; the
 *    journal verifies. And the keys (the fakes prove they were the ones presented) appear in no
 *    byte of the data dir (the journal's SQLite database with its -wal read raw right after the
 *    kill, and again at the end; plane.log), no stdout/stderr of either process, and no error:
 *    a second agent per provider meets a 401 whose body echoes the key, as careless servers do.
 *
 * OpenAI's Responses and chat-completions share AGENTPLANE_OPENAI_BASE_URL (as api.openai.com
 * serves both), so a small front routes `/v1/responses` to one fake and the rest to the other.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify as toYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../../src-shared/ipc/contract';
import { SETTABLE_PROVIDERS, type SettableProvider } from '../../src-shared/protocol/providers';
import { tempDataDir } from '../../tests/support/journal-support';
import { call, testPlane } from '../../tests/support/runtime-support';
import { misbehavingStdio } from '../../tests/doubles/everything-server';
import { FAKE_SIGNATURE, FAKE_TOOL_ID, startFakeAnthropicServer, type FakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';
import { FAKE_CALL_ID, FAKE_ENCRYPTED, startFakeResponsesServer, type FakeResponsesServer } from '../../tests/doubles/fake-responses-server';
import { FAKE_THOUGHT_SIGNATURE, startFakeGeminiServer, type FakeGeminiServer } from '../../tests/doubles/fake-gemini-server';
import { FAKE_TOOL_ANSWER_PREFIX, startFakeChatServer, type FakeChatServer } from '../../tests/doubles/fake-chat-server';
import { writeMcpServersFile } from '../protocols/mcp/client/mcp-servers-file';
import { loadProviders } from '../plane/plane-config';
import type { Plane } from '../plane/plane';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'provider-plane-child.ts');
/** The fakes' scripted behaviour is the model a step names. */
const LOOP = 'tool-then-answer';
const REFUSED = 'unauthorized';
const TOOL_ARGUMENT = 'ping from the model';

/** Distinctive, random per test run: found anywhere means leaked, never a coincidence. */
const secret = (prefix: string) => `${prefix}${randomBytes(18).toString('hex')}`;
const KEYS = { anthropic: secret('sk-ant-e2e-'), openai: secret('sk-proj-e2e-'), gemini: secret('AIza-e2e-') };
/** chat is configured with the OpenAI variables (one key for both of OpenAI's wires). */
const keyOf = (provider: SettableProvider) => KEYS[provider === 'chat' ? 'openai' : provider];

let anthropic: FakeAnthropicServer;
let responses: FakeResponsesServer;
let gemini: FakeGeminiServer;
let chat: FakeChatServer;
let front: { baseUrl: string; close(): Promise<void> };
let dataDir: string;
/** Every byte either process wrote to stdout and stderr. */
const output: string[] = [];
/** Where each key was found in the data dir right after the kill (file names). */
let leakedAfterKill: string[] = [];
let walAfterKill = 0;
/** When the first process was killed: model requests each fake had received for the tool loop, and whether its tool had run. */
const atKill = new Map<SettableProvider, { requests: number; toolRan: boolean }>();
let journalHeldToolArgument = false;
let suspended: Map<string, RunView>;
let finished: Map<string, RunView>;
let verifying: Plane;
/** What the fakes had received when both processes were done (later probes do not count). */
const seen = new Map<SettableProvider, { loop: Record<string, unknown>[]; refused: Record<string, unknown>[]; keys: Set<string> }>();

/** The request bodies a provider's fake received for one scripted behaviour, in order. */
function bodiesOf(provider: SettableProvider, behaviour: string): Record<string, unknown>[] {
  const all =
    provider === 'anthropic' ? anthropic.requests.map((r) => ({ model: r.body.model, body: r.body }))
    : provider === 'openai' ? responses.requests.map((r) => ({ model: (r.body as Record<string, unknown>).model, body: r.body as Record<string, unknown> }))
    : provider === 'gemini' ? gemini.requests.map((r) => ({ model: r.model, body: r.body as Record<string, unknown> }))
    : chat.requests.map((r) => ({ model: (r.body as Record<string, unknown>).model, body: r.body as Record<string, unknown> }));
  return all.filter((r) => r.model === behaviour).map((r) => r.body);
}

/** The key as each fake received it, from its own header. */
function presentedKeys(provider: SettableProvider): string[] {
  const headers: IncomingHttpHeaders[] =
    provider === 'anthropic' ? anthropic.requests.map((r) => r.headers)
    : provider === 'openai' ? responses.requests.map((r) => r.headers)
    : provider === 'gemini' ? gemini.requests.map((r) => r.headers)
    : chat.requests.map((r) => r.headers);
  return headers.map((h) => String(provider === 'anthropic' ? h['x-api-key'] : provider === 'gemini' ? h['x-goog-api-key'] : String(h.authorization).replace(/^Bearer /, '')));
}

/**
 * One OpenAI base URL in front of two fakes, as api.openai.com serves both wires on one host:
 * `/v1/responses` to the Responses fake, everything else to the chat-completions fake.
 */
async function startOpenAiFront(responsesBase: string, chatBase: string): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = createServer((request, reply) => {
    const target = new URL(request.url?.startsWith('/v1/responses') ? responsesBase : chatBase);
    const upstream = forward({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
      reply.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(reply);
      answer.on('aborted', () => reply.destroy());
    });
    upstream.on('error', () => reply.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The data dir a person would set up: one tool agent and one refused agent per provider. */
function setUp(dir: string): void {
  mkdirSync(join(dir, 'agents'));
  const servers: Record<string, ReturnType<typeof misbehavingStdio>> = {};
  for (const provider of SETTABLE_PROVIDERS) {
    servers[`echo-${provider}`] = misbehavingStdio('polite', { COUNT_FILE: join(dir, `tool-calls-${provider}`) });
    const tools = {
      name: `tools-${provider}`,
      description: `Calls an MCP tool through ${provider}, with approval.`,
      input: { type: 'object' },
      steps: [
        { as: 'answer', model: { provider, model: LOOP, prompt: 'Echo something, then tell me what came back.', tools: [`mcp:echo-${provider}/echo`], maxTurns: 3 } },
        { output: '{{steps.answer.text}}' },
      ],
      grants: [
        { kind: 'model', name: provider },
        { kind: 'mcp', name: `echo-${provider}/echo`, approve: true },
      ],
    };
    const refused = {
      name: `refused-${provider}`,
      description: `Meets a 401 from ${provider} whose message echoes the key.`,
      input: { type: 'object' },
      steps: [{ as: 'answer', model: { provider, model: REFUSED, prompt: 'Hello?' } }, { output: '{{steps.answer.text}}' }],
      grants: [{ kind: 'model', name: provider }],
    };
    writeFileSync(join(dir, 'agents', `tools-${provider}.yaml`), toYaml(tools));
    writeFileSync(join(dir, 'agents', `refused-${provider}.yaml`), toYaml(refused));
  }
  writeMcpServersFile(dir, { servers });
}

/** The child's environment: the AGENTPLANE_* variables of this process dropped, the fakes' set. */
function childEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPLANE_')));
  return {
    ...env,
    AGENTPLANE_ANTHROPIC_API_KEY: KEYS.anthropic,
    AGENTPLANE_ANTHROPIC_BASE_URL: anthropic.baseUrl,
    AGENTPLANE_OPENAI_API_KEY: KEYS.openai,
    AGENTPLANE_OPENAI_BASE_URL: front.baseUrl,
    AGENTPLANE_GEMINI_API_KEY: KEYS.gemini,
    AGENTPLANE_GEMINI_BASE_URL: gemini.baseUrl,
  };
}

/**
 * Runs the child; `kill`: SIGKILL it once it prints READY, else wait for it to exit 0. Answers
 * its `RUN` lines by agent. Everything it printed is kept in `output`.
 */
async function runChild(args: string[], kill: boolean): Promise<Map<string, RunView>> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close', not 'exit': it comes after the child's stdout has been read to its end.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const runs = new Map<string, RunView>();
  const ready = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout += `${line}\n`;
      if (line.startsWith('RUN ')) {
        const run = JSON.parse(line.slice(4)) as RunView;
        runs.set(run.agent, run);
      }
      if (line === 'READY') resolve();
    });
  });
  if (kill) {
    const outcome = await Promise.race([ready.then(() => 'ready' as const), exited]);
    if (outcome !== 'ready') throw new Error(`the child exited (${outcome}) before READY:\n${stderr.slice(-2000)}`);
    child.kill('SIGKILL');
    await exited;
  } else {
    const code = await exited;
    if (code !== 0) throw new Error(`the child exited ${code}:\n${stderr.slice(-2000)}`);
  }
  output.push(stdout, stderr);
  return runs;
}

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : [];
  });
}

/** `<file>: <provider>` for every file under the data dir holding a key (or its random part), raw bytes. */
function keysIn(dir: string): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    for (const [provider, key] of Object.entries(KEYS)) {
      if (bytes.includes(key) || bytes.includes(key.slice(-24))) found.push(`${file.slice(dir.length + 1)}: ${provider}`);
    }
  }
  return found;
}

beforeAll(async () => {
  [anthropic, responses, gemini, chat] = await Promise.all([startFakeAnthropicServer(), startFakeResponsesServer(), startFakeGeminiServer(), startFakeChatServer()]);
  front = await startOpenAiFront(responses.baseUrl, chat.baseUrl);
  dataDir = tempDataDir('ap-provider-loop-');
  setUp(dataDir);

  const agents = SETTABLE_PROVIDERS.flatMap((p) => [`tools-${p}`, `refused-${p}`]);
  suspended = await runChild(['start', dataDir, ...agents], true);
  for (const p of SETTABLE_PROVIDERS) atKill.set(p, { requests: bodiesOf(p, LOOP).length, toolRan: existsSync(join(dataDir, `tool-calls-${p}`)) });
  // The journal as SIGKILL left it, -wal included, before any other process opens it.
  leakedAfterKill = keysIn(dataDir);
  const files = filesUnder(dataDir);
  walAfterKill = files.filter((f) => f.endsWith('-wal')).reduce((size, f) => size + statSync(f).size, 0);
  journalHeldToolArgument = files.filter((f) => /\.(db|sqlite3?)(-wal)?$/.test(f)).some((f) => readFileSync(f).includes(TOOL_ARGUMENT));

  finished = await runChild(['resume', dataDir], false);
  for (const p of SETTABLE_PROVIDERS) seen.set(p, { loop: bodiesOf(p, LOOP), refused: bodiesOf(p, REFUSED), keys: new Set(presentedKeys(p)) });
  // A plane holding no key at all reads the result and verifies the journal.
  verifying = await testPlane({ dataDir, providers: loadProviders({}, { dataDir }) });
}, 90_000);

afterAll(async () => {
  await verifying?.close();
  await Promise.all([anthropic?.close(), responses?.close(), gemini?.close(), chat?.close(), front?.close()]);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a tool-calling agent killed mid-loop and resumed by another process', () => {
  it.each(SETTABLE_PROVIDERS)('%s: was killed waiting for the tool, after turn 1 was journaled', (provider) => {
    const run = suspended.get(`tools-${provider}`);
    expect(run, `the first process printed no run of tools-${provider}`).toBeDefined();
    expect(run).toMatchObject({
      status: 'suspended',
      pending: { reason: 'approval', subject: { effect: 'mcp', name: `echo-${provider}/echo`, request: { arguments: { message: TOOL_ARGUMENT } } } },
    });
    // Turn 1 reached the model once before the kill; the tool not at all (it waits for the approval).
    expect(atKill.get(provider)).toEqual({ requests: 1, toolRan: false });
    expect(finished.get(`tools-${provider}`)?.runId).toBe(run!.runId);
  });

  it.each(SETTABLE_PROVIDERS)('%s: resumed, the tool ran once, turn 1 was not repeated, and the run answered', async (provider) => {
    const run = finished.get(`tools-${provider}`);
    expect(run, `the second process printed no run of tools-${provider}`).toMatchObject({ outcome: 'succeeded' });
    expect(String(run!.result)).toContain(FAKE_TOOL_ANSWER_PREFIX);
    expect(String(run!.result)).toContain(TOOL_ARGUMENT);

    // Exactly two model requests over both processes: turn 1 (no tool result yet), turn 2.
    const bodies = seen.get(provider)!.loop;
    expect(bodies).toHaveLength(2);
    expect(JSON.stringify(bodies[0])).not.toContain(FAKE_TOOL_ANSWER_PREFIX);
    // The tool performed exactly once (its server counts every tools/call that reaches it).
    expect(readFileSync(join(dataDir, `tool-calls-${provider}`), 'utf8')).toBe('echo\n');

    // Turn 2 carried turn 1's assistant turn as the provider gave it (from the journal: the
    // process that received it is dead), continuation included, and the tool's result.
    const turn2 = bodies[1]!;
    if (provider === 'anthropic') {
      const messages = turn2.messages as { role: string; content: Record<string, unknown>[] }[];
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(messages[1]!.content[0]).toMatchObject({ type: 'thinking', signature: FAKE_SIGNATURE });
      expect(messages[2]!.content[0]).toMatchObject({ type: 'tool_result', content: expect.stringContaining(TOOL_ARGUMENT) });
    } else if (provider === 'openai') {
      const input = turn2.input as Record<string, unknown>[];
      expect(turn2.store).toBe(false);
      expect(input.map((item) => item.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_output']);
      expect(input[1]).toMatchObject({ encrypted_content: FAKE_ENCRYPTED });
      expect(input[3]).toMatchObject({ call_id: FAKE_CALL_ID, output: expect.stringContaining(TOOL_ARGUMENT) });
    } else if (provider === 'gemini') {
      const contents = turn2.contents as { role: string; parts: Record<string, unknown>[] }[];
      expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
      expect(contents[1]!.parts[0]).toMatchObject({ functionCall: { name: 'mcp__echo-gemini__echo' }, thoughtSignature: FAKE_THOUGHT_SIGNATURE });
      expect(contents[2]!.parts[0]).toMatchObject({ functionResponse: { name: 'mcp__echo-gemini__echo' } });
    } else {
      const messages = turn2.messages as Record<string, unknown>[];
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(messages[2]).toMatchObject({ tool_call_id: (messages[1]!.tool_calls as { id: string }[])[0]!.id });
    }

    // Each effect started exactly once across both processes: the schema lookup, turn 1, the
    // tool, turn 2.
    const records = await verifying.journal.readRun(run!.runId, 1, 1_000);
    const started = records.filter((r) => r.kind === 'EffectStarted').map((r) => `${String(r.body.effect)}:${String(r.body.name)}`);
    expect(started).toEqual([`mcp:schema:echo-${provider}/echo`, `model:${provider}`, `mcp:echo-${provider}/echo`, `model:${provider}`]);
  });

  it('the journal verifies after the kill and the resume', async () => {
    const report = await call(verifying, 'journal.verify', {});
    expect(report).toMatchObject({ ok: true, unknownKinds: 0 });
  });
});

/** POSTs `body` as JSON; answers the status and the body's text. */
async function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: answer.status, text: await answer.text() };
}

describe('the fakes refuse a turn 2 whose continuation did not come back as sent', () => {
  // What makes "the run succeeded" above mean "the continuation survived the kill". (The chat
  // wire has no opaque continuation; its turn 2 is checked field by field above.)
  it('anthropic: an assistant turn without its signed thinking block', async () => {
    const lost = {
      model: LOOP,
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: FAKE_TOOL_ID, name: 't', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: FAKE_TOOL_ID, content: 'ok' }] },
      ],
    };
    const answer = await post(`${anthropic.baseUrl}/v1/messages`, { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, lost);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('must start with a thinking block');
  });

  it('openai: a function call without its encrypted reasoning item', async () => {
    const lost = {
      model: LOOP,
      store: false,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
        { id: 'fc_fake_1', type: 'function_call', call_id: FAKE_CALL_ID, name: 't', arguments: '{}' },
        { type: 'function_call_output', call_id: FAKE_CALL_ID, output: 'ok' },
      ],
    };
    const answer = await post(`${responses.baseUrl}/responses`, { authorization: 'Bearer k' }, lost);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("without its required 'reasoning' item");
  });

  it('gemini: a function call without its thought signature', async () => {
    const lost = {
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ functionCall: { name: 't', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 't', response: { content: 'ok' } } }] },
      ],
    };
    const answer = await post(`${gemini.baseUrl}/models/${LOOP}:generateContent`, { 'x-goog-api-key': 'k' }, lost);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('missing a thought_signature');
  });
});

describe('the keys', () => {
  it('were the ones presented to each fake (so the searches below look for what was really used)', () => {
    for (const provider of SETTABLE_PROVIDERS) {
      expect([...seen.get(provider)!.keys], provider).toEqual([keyOf(provider)]);
    }
  });

  it('reach no error: a 401 echoing the key fails the run with a message free of it', () => {
    for (const provider of SETTABLE_PROVIDERS) {
      const run = suspended.get(`refused-${provider}`);
      expect(run, provider).toMatchObject({ outcome: 'failed', error: { code: 'ModelRefused', message: expect.stringContaining('401') } });
      expect(seen.get(provider)!.refused, provider).toHaveLength(1);
      expect(run!.error!.message, provider).not.toContain(keyOf(provider));
      expect(run!.error!.message, provider).not.toContain(keyOf(provider).slice(-24));
    }
  });

  it('appear in no byte of the data dir: the journal (-wal read raw right after the kill), plane.log, every file', async () => {
    // The scan can see: right after the kill the -wal held records, in clear.
    expect(walAfterKill).toBeGreaterThan(0);
    expect(journalHeldToolArgument).toBe(true);
    expect(leakedAfterKill).toEqual([]);
    await verifying.close();
    const log = join(dataDir, 'plane.log');
    expect(existsSync(log) && readFileSync(log, 'utf8')).toContain('plane started');
    expect(keysIn(dataDir)).toEqual([]);
    // And it would have seen one: a key planted in a file of the data dir is found.
    writeFileSync(join(dataDir, 'planted'), `x${KEYS.gemini}x`);
    expect(keysIn(dataDir)).toEqual(['planted: gemini']);
  });

  it('appear in nothing either process printed', () => {
    const printed = output.join('\n');
    expect(printed).toContain('"outcome":"succeeded"'); // what was scanned holds the runs' views
    for (const [provider, key] of Object.entries(KEYS)) {
      expect(printed.includes(key), provider).toBe(false);
      expect(printed.includes(key.slice(-24)), provider).toBe(false);
    }
  });
});
