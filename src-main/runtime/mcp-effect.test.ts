/**
 * An agent's `mcp` step, end to end through a real plane: the official server-everything (over
 * Streamable HTTP on 127.0.0.1) and the misbehaving stdio double, a manifest compiled in the
 * test, the journal read back. One EffectStarted/EffectDone pair of effect `mcp` per call, the
 * result labelled `mcp:<server>`, replay on resume without calling the server again, and an
 * `approve: true` grant suspending before the call.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import { misbehavingStdio, startEverythingHttp, type RunningServer } from '../../tests/doubles/everything-server';
import type { Plane } from '../plane/plane';
import { writeMcpServersFile } from '../protocols/mcp/client/mcp-servers-file';
import { LARGE_VALUE_BYTES } from './large-values';

const planes: Plane[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
  for (const s of servers.splice(0)) await s.stop();
});

const echoThenAsk = agent({
  name: 'echo-then-ask',
  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  steps: [
    { as: 'echoed', mcp: { server: 'everything', tool: 'echo', args: { message: '{{input.text}}' } } },
    { as: 'more', input: { prompt: 'anything to add?' } },
    { output: { said: '{{steps.echoed.content.0.text}}', added: '{{steps.more}}' } },
  ],
  grants: [{ kind: 'mcp', name: 'everything/echo' }],
});

async function open(dataDir: string, agents = [echoThenAsk]): Promise<Plane> {
  const p = await testPlane({ dataDir, agents });
  planes.push(p);
  return p;
}

async function mcpRecords(p: Plane, runId: string) {
  const records = await p.journal.readRun(runId, 1, 1_000);
  return records.filter((r) => (r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'mcp') || r.kind === 'EffectDone' || r.kind === 'EffectFailed');
}

describe('an agent calling an MCP tool', () => {
  it('journals one mcp effect, and replays it on resume without calling the server again (the server is gone by then)', async () => {
    const server = await startEverythingHttp();
    servers.push(server);
    const dataDir = tempDataDir('ap-mcp-effect-');
    writeMcpServersFile(dataDir, { servers: { everything: { transport: 'http', url: server.url, headers: { 'X-Api-Key': 'key-never-journaled' } } } });

    const first = await open(dataDir);
    const run = await call(first, 'runs.start', { agent: 'echo-then-ask', input: { text: 'hello, server' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'input' });
    const [started, done, ...rest] = await mcpRecords(first, run.runId);
    expect(rest).toEqual([]);
    expect(started).toMatchObject({ kind: 'EffectStarted', body: { effect: 'mcp', name: 'everything/echo', request: { server: 'everything', tool: 'echo', arguments: { message: 'hello, server' } }, destination: server.url } });
    expect(done).toMatchObject({ kind: 'EffectDone', body: { provenance: 'mcp:everything', result: { content: [{ type: 'text', text: 'Echo: hello, server' }] } } });
    const journal = JSON.stringify(await first.journal.readRun(run.runId, 1, 1_000));
    expect(journal).not.toContain('key-never-journaled');
    await first.close();
    await server.stop();

    // A new plane resumes the run: step 0 is answered from the record; a call would fail now.
    const second = await open(dataDir);
    await call(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'nothing' } });
    await second.runtime.settled(run.runId);
    const finished = await call(second, 'runs.get', { runId: run.runId });
    expect(finished).toMatchObject({ outcome: 'succeeded', result: { said: 'Echo: hello, server', added: 'nothing' } });
    expect((await mcpRecords(second, run.runId)).filter((r) => r.kind === 'EffectStarted')).toHaveLength(1);
  });

  it('an approve: true grant suspends before the call; the server is reached only once a person allows it', async () => {
    const dataDir = tempDataDir('ap-mcp-effect-');
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite', { COUNT_FILE: count }) } });
    const guarded = agent({
      name: 'guarded',
      steps: [{ mcp: { server: 'local', tool: 'echo', args: { message: 'approved' } } }],
      grants: [{ kind: 'mcp', name: 'local/echo', approve: true }],
    });
    const p = await open(dataDir, [guarded]);
    const run = await call(p, 'runs.start', { agent: 'guarded', input: {}, wait: true });
    expect(run.pending).toMatchObject({ reason: 'approval', subject: { effect: 'mcp', name: 'local/echo', request: { server: 'local', tool: 'echo', arguments: { message: 'approved' } }, destination: `stdio:${process.execPath}` } });
    expect(existsSync(count)).toBe(false);
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await p.runtime.settled(run.runId);
    expect(await call(p, 'runs.get', { runId: run.runId })).toMatchObject({ outcome: 'succeeded', result: { content: [{ type: 'text', text: 'approved' }] } });
    expect(readFileSync(count, 'utf8')).toBe('echo\n');
  });

  it('a tool that reports isError fails the run with the server\'s text (Landed); a large result is journaled as digest and size', async () => {
    const dataDir = tempDataDir('ap-mcp-effect-');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite') } });
    const failing = agent({ name: 'failing', steps: [{ mcp: { server: 'local', tool: 'fail' } }], grants: [{ kind: 'mcp', name: 'local/fail' }] });
    const large = agent({ name: 'large', steps: [{ mcp: { server: 'local', tool: 'big' } }], grants: [{ kind: 'mcp', name: 'local/big' }] });
    const p = await open(dataDir, [failing, large]);

    const failed = await call(p, 'runs.start', { agent: 'failing', input: {}, wait: true });
    expect(failed.outcome).toBe('failed');
    const failure = (await mcpRecords(p, failed.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failure?.body).toMatchObject({ disposition: 'Landed', error: { code: 'McpToolError', message: 'local/fail ran and reported an error: disk full' } });

    const big = await call(p, 'runs.start', { agent: 'large', input: {}, wait: true });
    expect(big.outcome).toBe('succeeded');
    const done = (await mcpRecords(p, big.runId)).find((r) => r.kind === 'EffectDone');
    expect(done?.body).toMatchObject({ result: { large: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: expect.any(Number) } } });
    expect(((done?.body as { result: { large: { bytes: number } } }).result.large.bytes)).toBeGreaterThan(LARGE_VALUE_BYTES);
    expect(JSON.stringify(done).length).toBeLessThan(2_000);
  });

  it('a step whose server is not declared fails before anything is sent (DidNotHappen)', async () => {
    const dataDir = tempDataDir('ap-mcp-effect-');
    const orphan = agent({ name: 'orphan', steps: [{ mcp: { server: 'nowhere', tool: 'echo' } }], grants: [{ kind: 'mcp', name: 'nowhere/echo' }] });
    const p = await open(dataDir, [orphan]);
    const run = await call(p, 'runs.start', { agent: 'orphan', input: {}, wait: true });
    expect(run.outcome).toBe('failed');
    const failure = (await mcpRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failure?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'McpServerNotDeclared' } });
  });
});
