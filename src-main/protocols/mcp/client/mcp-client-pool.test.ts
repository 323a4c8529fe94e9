/**
 * The plane's MCP client pool against real servers: the official server-everything over stdio
 * and over Streamable HTTP (127.0.0.1), and a hand-written stdio server that misbehaves in one
 * chosen way (tests/doubles/misbehaving-mcp-server.mjs). No mocks: real processes, real sockets,
 * the official SDK client.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../../../tests/support/journal-support';
import { everythingStdio, misbehavingStdio, startEverythingHttp, type RunningServer } from '../../../../tests/doubles/everything-server';
import type { McpServerConfig } from '../../../../src-shared/protocol/mcp';
import { silentLogger } from '../../../base/logger';
import { EffectFailure } from '../../../runtime/run-signals';
import { McpClientPool, McpServerNotDeclaredError } from './mcp-client-pool';
import { mcpServersFilePath, McpServersFileError, readMcpServersFile, writeMcpServersFile } from './mcp-servers-file';

const pools: McpClientPool[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
  for (const server of servers.splice(0)) await server.stop();
});

function poolWith(declared: Record<string, McpServerConfig>, options: ConstructorParameters<typeof McpClientPool>[2] = {}): { pool: McpClientPool; dataDir: string } {
  const dataDir = tempDataDir('ap-mcp-client-');
  writeMcpServersFile(dataDir, { servers: declared });
  const pool = new McpClientPool(dataDir, silentLogger, { probeTimeoutMs: 1_000, ...options });
  pools.push(pool);
  return { pool, dataDir };
}

/** The EffectFailure a call rejected with (the test fails if it did not reject with one). */
async function failureOf(work: Promise<unknown>): Promise<EffectFailure> {
  const error = await work.then(
    (value) => new Error(`expected a failure, got ${JSON.stringify(value).slice(0, 200)}`),
    (e: unknown) => e,
  );
  if (!(error instanceof EffectFailure)) throw error;
  return error;
}

const AT = { runId: 'run-test', step: 0 };

async function exerciseEverything(pool: McpClientPool): Promise<void> {
  const view = await pool.connect('everything');
  expect(view.error).toBeUndefined();
  expect(view).toMatchObject({ name: 'everything', state: 'connected', negotiatedVersion: '2025-11-25', serverInfo: { name: expect.stringContaining('everything') } });
  expect(view.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
  expect(view.tools?.find((t) => t.name === 'echo')?.inputSchema).toMatchObject({ type: 'object' });
  expect(view.prompts?.length).toBeGreaterThan(0);
  expect(view.resources?.length).toBeGreaterThan(0);

  const echoed = await pool.callTool('everything', 'echo', { message: 'hello from a run' }, AT);
  expect(echoed).toEqual({ result: { content: [{ type: 'text', text: 'Echo: hello from a run' }] }, provenance: 'mcp:everything' });

  const resource = view.resources![0]!;
  const read = (await pool.readResource('everything', resource.uri)) as { contents: Array<{ uri: string }> };
  expect(read.contents[0]?.uri).toBe(resource.uri);

  const prompt = view.prompts!.find((p) => p.arguments.every((a) => !a.required))!;
  const got = (await pool.getPrompt('everything', prompt.name)) as { messages: unknown[] };
  expect(got.messages.length).toBeGreaterThan(0);

  // `list` shows the live state and never connects by itself.
  expect(pool.list()).toEqual([expect.objectContaining({ name: 'everything', state: 'connected', negotiatedVersion: '2025-11-25' })]);
}

describe('the MCP client pool against server-everything', () => {
  it('over stdio: connects (2025-11-25), lists tools, prompts and resources, calls echo, reads a resource, gets a prompt', async () => {
    const { pool } = poolWith({ everything: everythingStdio() });
    expect(pool.list()).toEqual([expect.objectContaining({ name: 'everything', transport: 'stdio', state: 'disconnected' })]);
    await exerciseEverything(pool);
    expect(pool.destinationOf('everything')).toBe(`stdio:${process.execPath}`);
  });

  it('over Streamable HTTP on 127.0.0.1: the same', async () => {
    const server = await startEverythingHttp();
    servers.push(server);
    const { pool } = poolWith({ everything: { transport: 'http', url: server.url, headers: { Authorization: 'Bearer not-shown-anywhere' } } });
    await exerciseEverything(pool);
    expect(pool.destinationOf('everything')).toBe(server.url);
    expect(JSON.stringify(pool.list())).not.toContain('not-shown-anywhere');
    expect(pool.list()[0]?.headerNames).toEqual(['Authorization']);
  });

  it('refuses an unknown tool and arguments failing its schema before running (DidNotHappen), in the server\'s words', async () => {
    const { pool } = poolWith({ everything: everythingStdio() });
    const unknown = await failureOf(pool.callTool('everything', 'no-such-tool', {}, AT));
    expect(unknown).toMatchObject({ code: 'McpRefused', disposition: 'DidNotHappen' });
    expect(unknown.message).toMatch(/everything refused no-such-tool: MCP error -32602: Tool no-such-tool not found/);
    const badArgs = await failureOf(pool.callTool('everything', 'echo', { message: 5 }, AT));
    expect(badArgs).toMatchObject({ code: 'McpRefused', disposition: 'DidNotHappen' });
    expect(badArgs.message).toMatch(/-32602: Input validation error.*message/);
  });

  it('over HTTP, a server gone before the call: refused connection, nothing sent (DidNotHappen)', async () => {
    const server = await startEverythingHttp();
    servers.push(server);
    const { pool } = poolWith({ everything: { transport: 'http', url: server.url, headers: {} } });
    expect((await pool.connect('everything')).state).toBe('connected');
    await server.stop();
    const failed = await failureOf(pool.callTool('everything', 'echo', { message: 'x' }, AT));
    expect(failed).toMatchObject({ disposition: 'DidNotHappen' });
    expect(failed.message).toMatch(/ECONNREFUSED/);
  });

  it('over HTTP, an answer larger than the bound is cut off: the request left, so InDoubt', async () => {
    const server = await startEverythingHttp();
    servers.push(server);
    const { pool } = poolWith({ everything: { transport: 'http', url: server.url, headers: {} } }, { maxResponseBytes: 65_536, deadlineMs: 5_000 });
    expect((await pool.connect('everything')).state).toBe('connected');
    const failed = await failureOf(pool.callTool('everything', 'echo', { message: 'y'.repeat(200_000) }, AT));
    expect(failed).toMatchObject({ code: 'McpConnectionLost', disposition: 'InDoubt' });
    expect(failed.message).toMatch(/everything\/echo: an answer exceeded 65536 bytes after the request was sent; whether the tool ran is unknown/);
    expect(pool.list()[0]).toMatchObject({ state: 'failed', error: 'an answer exceeded 65536 bytes' });
  });

  it('refuses a server that is not declared (DidNotHappen) and answers NotDeclared for a connect', async () => {
    const { pool } = poolWith({});
    expect(await failureOf(pool.callTool('ghost', 'echo', {}, AT))).toMatchObject({ code: 'McpServerNotDeclared', disposition: 'DidNotHappen' });
    await expect(pool.connect('ghost')).rejects.toThrow(McpServerNotDeclaredError);
  });
});

describe('the MCP client pool against servers that misbehave', () => {
  it('declares no elicitation, sampling or roots capability, and names itself', async () => {
    const { pool, dataDir } = poolWith({}, { clientVersion: '9.9.9' });
    const init = join(dataDir, 'initialize');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite', { INIT_FILE: init }) } });
    expect((await pool.connect('local')).state).toBe('connected');
    const params = JSON.parse(readFileSync(init, 'utf8').trim().split('\n').at(-1)!) as { capabilities: object; clientInfo: object; protocolVersion: string };
    expect(params.capabilities).toEqual({});
    expect(params.clientInfo).toMatchObject({ name: 'agentplane', version: '9.9.9' });
    expect(params.protocolVersion).toBe('2025-11-25');
  });

  it('a tool that ran and answered isError Landed, with its text', async () => {
    const { pool } = poolWith({ bad: misbehavingStdio('polite') });
    const failed = await failureOf(pool.callTool('bad', 'fail', {}, AT));
    expect(failed).toMatchObject({ code: 'McpToolError', disposition: 'Landed', message: 'bad/fail ran and reported an error: disk full' });
  });

  it('non-protocol output on stdout: the error names the server and the line, and the pool goes on serving', async () => {
    const { pool } = poolWith({ noisy: misbehavingStdio('garbage'), good: misbehavingStdio('polite') }, { deadlineMs: 2_500, probeTimeoutMs: 500 });
    const view = await pool.connect('noisy');
    expect(view.state).toBe('failed');
    expect(view.error).toMatch(/cannot connect to noisy: no handshake within 2500 ms; it wrote non-protocol output on stdout .*"(Server starting\.\.\. this line is not JSON-RPC|not json: \d+ bytes received)"/);
    const call = await failureOf(pool.callTool('noisy', 'echo', { message: 'x' }, AT));
    expect(call).toMatchObject({ code: 'McpConnectFailed', disposition: 'DidNotHappen' });
    expect(call.message).toContain('non-protocol output on stdout');
    expect((await pool.callTool('good', 'echo', { message: 'still here' }, AT)).result).toEqual({ content: [{ type: 'text', text: 'still here' }] });
  });

  it('a JSON line that is no JSON-RPC message: the SDK\'s parse error, named in the failure', async () => {
    const { pool } = poolWith({ chatty: misbehavingStdio('json-noise') }, { deadlineMs: 1_500 });
    const failed = await failureOf(pool.callTool('chatty', 'echo', { message: 'x' }, AT));
    expect(failed).toMatchObject({ code: 'McpTimeout', disposition: 'InDoubt' });
    expect(failed.message).toMatch(/chatty\/echo: no answer within 1500 ms; it wrote non-protocol output on stdout: "a JSON line that is no JSON-RPC message \(.+\)"/);
  });

  it('a server that never answers: the whole-request deadline makes the call InDoubt (the request left)', async () => {
    const { pool, dataDir } = poolWith({}, { deadlineMs: 1_500 });
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { wedged: misbehavingStdio('silent', { COUNT_FILE: count }) } });
    const started = Date.now();
    const failed = await failureOf(pool.callTool('wedged', 'echo', { message: 'x' }, AT));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(failed).toMatchObject({ code: 'McpTimeout', disposition: 'InDoubt' });
    expect(failed.message).toMatch(/wedged\/echo: no answer within 1500 ms; the request was sent/);
    expect(readFileSync(count, 'utf8')).toBe('echo\n');
  });

  it('a server that dies mid-call: InDoubt; the next call starts it again', async () => {
    const { pool, dataDir } = poolWith({});
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { fragile: misbehavingStdio('die', { COUNT_FILE: count }) } });
    const failed = await failureOf(pool.callTool('fragile', 'echo', { message: 'x' }, AT));
    expect(failed).toMatchObject({ code: 'McpConnectionLost', disposition: 'InDoubt' });
    expect(failed.message).toMatch(/fragile\/echo: the server process exited or closed its pipes after the request was sent/);
    expect(pool.list()[0]).toMatchObject({ state: 'failed', error: 'the server process of fragile exited' });
    await failureOf(pool.callTool('fragile', 'echo', { message: 'again' }, AT));
    expect(readFileSync(count, 'utf8')).toBe('echo\necho\n'); // a fresh process took the second call
  });

  it('a server that settles on a protocol version the plane does not speak is refused at connect', async () => {
    const { pool } = poolWith({ ancient: misbehavingStdio('old') });
    const view = await pool.connect('ancient');
    expect(view.state).toBe('failed');
    expect(view.error).toMatch(/2024-11-05/);
    expect(await failureOf(pool.callTool('ancient', 'echo', { message: 'x' }, AT))).toMatchObject({ code: 'McpConnectFailed', disposition: 'DidNotHappen' });
  });

  it('never shows a secret: env values are in no view, error or stderr tail', async () => {
    const secret = 'tok-5f1d9a3c7e';
    const { pool } = poolWith({ leaky: misbehavingStdio('die', { SECRET_TOKEN: secret }) });
    await pool.connect('leaky');
    await failureOf(pool.callTool('leaky', 'echo', { message: 'x' }, AT)).then((f) => expect(f.message).not.toContain(secret));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [view] = pool.list();
    expect(view?.envNames).toEqual(['SECRET_TOKEN']);
    expect(view?.stderrTail).toEqual(expect.arrayContaining(['misbehaving-mcp-server: using token [redacted]']));
    expect(JSON.stringify(view)).not.toContain(secret);
  });
});

describe('mcp-servers.json', () => {
  it('is written 0600 and read back; add refuses a duplicate name; remove forgets', async () => {
    const { pool, dataDir } = poolWith({});
    pool.add('everything', everythingStdio());
    expect(statSync(mcpServersFilePath(dataDir)).mode & 0o777).toBe(0o600);
    expect(readMcpServersFile(dataDir).servers.everything).toMatchObject({ transport: 'stdio', args: [expect.stringContaining('server-everything'), 'stdio'] });
    expect(() => pool.add('everything', everythingStdio())).toThrow(/an MCP server named everything is already declared/);
    expect(await pool.remove('everything')).toBe(true);
    expect(await pool.remove('everything')).toBe(false);
    expect(pool.list()).toEqual([]);
  });

  it('a malformed file is a clear error naming the file and the field, and is left untouched', async () => {
    const { pool, dataDir } = poolWith({});
    const path = mcpServersFilePath(dataDir);
    const bad = JSON.stringify({ servers: { files: { transport: 'stdio', command: '' } } });
    writeFileSync(path, bad);
    expect(() => pool.list()).toThrow(McpServersFileError);
    expect(() => pool.list()).toThrow(/mcp-servers\.json: servers\.files\.command: .*nothing was changed/);
    expect(() => pool.add('other', everythingStdio())).toThrow(/servers\.files\.command/);
    expect(await failureOf(pool.callTool('files', 'read', {}, AT))).toMatchObject({ disposition: 'DidNotHappen', message: expect.stringMatching(/servers\.files\.command/) });
    expect(readFileSync(path, 'utf8')).toBe(bad);

    writeFileSync(path, '{ "servers": ');
    expect(() => pool.list()).toThrow(/mcp-servers\.json: not valid JSON/);
    writeFileSync(path, JSON.stringify({ servers: { 'Bad Name': everythingStdio() } }));
    expect(() => pool.list()).toThrow(/mcp-servers\.json: servers\.Bad Name: a lowercase name/);
    expect(readFileSync(path, 'utf8')).toContain('Bad Name');
  });
});
