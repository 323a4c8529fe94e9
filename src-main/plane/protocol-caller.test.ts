/**
 * A protocol adapter's caller (an MCP host, through `caller` in the call context) acts for itself
 * and only on its own runs: its run is admitted in its name, it may answer its run's input
 * request (elicitation) and cancel its run (tasks/cancel), and nothing else. An approval, or
 * another caller's run, is a person's at this plane: refused, and the run keeps waiting.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testPlane } from '../../tests/support/runtime-support';
import type { Plane } from './plane';
import type { CallContext } from './dispatch';
import type { RunView } from '../../src-shared/ipc/contract';

const MCP: CallContext = { transport: 'local', caller: { principal: 'mcp:local', via: 'mcp' } };
const OTHER: CallContext = { transport: 'local', caller: { principal: 'mcp:stdio', via: 'mcp' } };
const UI: CallContext = { transport: 'web' };

const planes: Plane[] = [];
afterEach(async () => {
  for (const plane of planes.splice(0)) await plane.close();
});

async function plane(): Promise<Plane> {
  const p = await testPlane();
  planes.push(p);
  return p;
}

async function ok<T>(p: Plane, name: string, request: unknown, context: CallContext): Promise<T> {
  const result = await p.dispatch(name, request, context);
  if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`);
  return result.value as T;
}

async function waitingRun(p: Plane, agent: string, input: unknown): Promise<RunView> {
  const { runId } = await ok<RunView>(p, 'runs.start', { agent, input }, MCP);
  for (let i = 0; i < 200; i++) {
    const run = await ok<RunView>(p, 'runs.get', { runId }, UI);
    if (run.pending) return run;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`run ${runId} never waited`);
}

describe('a protocol caller on the plane', () => {
  it('is the run’s owner and trigger, not the person at this machine', async () => {
    const p = await plane();
    const run = await waitingRun(p, 'write-note', { title: 't', topic: 'x' });
    expect(run.chain).toEqual(['mcp:local']);
    const { records } = await ok<{ records: Array<{ kind: string; body: Record<string, unknown> }> }>(p, 'journal.records', { runId: run.runId }, UI);
    expect(records[0]!.body).toMatchObject({ owner: 'mcp:local', trigger: { via: 'mcp', by: 'mcp:local' } });
  });

  it('may not approve its own run’s effect: only a person at this plane can', async () => {
    const p = await plane();
    const run = await waitingRun(p, 'write-note', { title: 't', topic: 'x' });
    expect(run.pending?.reason).toBe('approval');
    const decide = { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash };
    const refused = await p.dispatch('approvals.decide', decide, MCP);
    expect(refused).toMatchObject({ ok: false, error: { code: 'AP_FORBIDDEN' } });
    expect((await ok<RunView>(p, 'runs.get', { runId: run.runId }, UI)).pending?.waitId).toBe(run.pending!.waitId);
    // The person can.
    expect((await ok<RunView>(p, 'approvals.decide', decide, UI)).pending?.waitId).not.toBe(run.pending!.waitId);
  });

  it('may answer its own run’s input request, journaled as its answer; another caller may not', async () => {
    const p = await plane();
    const run = await waitingRun(p, 'ask-first', { question: 'why?' });
    expect(run.pending?.reason).toBe('input');
    const answer = { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'because' } };
    expect(await p.dispatch('approvals.decide', answer, OTHER)).toMatchObject({ ok: false, error: { code: 'AP_NOT_FOUND' } });
    await ok(p, 'approvals.decide', answer, MCP);
    const { records } = await ok<{ records: Array<{ kind: string; body: Record<string, unknown> }> }>(p, 'journal.records', { runId: run.runId }, UI);
    expect(records.find((r) => r.kind === 'Decision')?.body).toMatchObject({ by: 'mcp:local' });
  });

  it('cancels only its own run, in its own name', async () => {
    const p = await plane();
    const run = await waitingRun(p, 'write-note', { title: 't', topic: 'x' });
    expect(await p.dispatch('runs.cancel', { runId: run.runId }, OTHER)).toMatchObject({ ok: false, error: { code: 'AP_NOT_FOUND' } });
    expect(await ok<RunView>(p, 'runs.cancel', { runId: run.runId }, MCP)).toMatchObject({ outcome: 'cancelled' });
    const { records } = await ok<{ records: Array<{ kind: string; body: Record<string, unknown> }> }>(p, 'journal.records', { runId: run.runId }, UI);
    expect(records.find((r) => r.kind === 'Cancelled')?.body).toMatchObject({ by: 'mcp:local' });
  });
});
