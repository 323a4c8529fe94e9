/**
 * Approvals and in-doubt effects survive the process: a real plane process is killed with
 * SIGKILL, a new one opens the same data dir, and the run goes on from its journal.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import type { Plane } from '../plane/plane';
import { call, callsIn, countingProvider, failure, testPlane } from '../../tests/support/runtime-support';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'runtime-child.ts');
const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

/** Runs the child until it prints `<word> <runId>`, then kills it with SIGKILL. */
async function runChildAndKill(mode: 'suspend' | 'hang', dataDir: string, counter: string, word: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, dataDir, counter], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const runId = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith(`${word} `)) resolve(line.slice(word.length + 1));
    });
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before printing ${word}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return runId;
}

describe('across a killed process', () => {
  it('a suspended run is approved after a restart and every effect is performed exactly once', async () => {
    const dataDir = tempDataDir('ap-restart-');
    const counter = join(dataDir, 'model-calls');
    const runId = await runChildAndKill('suspend', dataDir, counter, 'SUSPENDED');
    expect(callsIn(counter)).toBe(1);

    const plane = await testPlane({ dataDir, providers: new Map([['local', countingProvider(counter)]]) });
    planes.push(plane);
    const waiting = await call(plane, 'approvals.list', {});
    const run = waiting.waiting.find((r) => r.runId === runId)!;
    expect(run.pending).toMatchObject({ reason: 'approval', subject: { name: 'file.write' } });
    await call(plane, 'approvals.decide', { runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await plane.runtime.settled(runId);
    const done = await call(plane, 'runs.get', { runId });
    expect(done.outcome).toBe('succeeded');

    expect(callsIn(counter)).toBe(1); // the model call was replayed from the record, not made again
    const records = await plane.journal.readRun(runId, 1, 100);
    const started = records.filter((r) => r.kind === 'EffectStarted').map((r) => (r.body as { step: number }).step);
    expect(started).toEqual([0, 1]); // each step started exactly once
    expect(readFileSync(join(dataDir, 'workspace', 'notes', 'survivor.md'), 'utf8')).toContain('# survivor');
  });

  it('an effect in flight when the process died is in doubt: a person resolves it, and retry performs it again', async () => {
    const dataDir = tempDataDir('ap-indoubt-');
    const counter = join(dataDir, 'model-calls');
    const runId = await runChildAndKill('hang', dataDir, counter, 'IN-FLIGHT');

    const plane = await testPlane({ dataDir, providers: new Map([['local', countingProvider(counter)]]) });
    planes.push(plane);
    await plane.runtime.settled(runId);
    const { waiting } = await call(plane, 'recovery.list', {});
    expect(waiting.map((r) => r.runId)).toEqual([runId]);
    const run = waiting[0]!;
    expect(run.pending).toMatchObject({ reason: 'recovery', subject: { effect: 'model', name: 'local' } });
    const failed = (await plane.journal.readRun(runId, 1, 100)).find((r) => r.kind === 'EffectFailed')!;
    expect(failed.body).toMatchObject({ disposition: 'InDoubt', error: { code: 'InFlightAtStop' } });
    expect((await call(plane, 'approvals.list', {})).waiting).toEqual([]);

    // Deliberately outside the contract: the plane must refuse it, whatever a caller's types said.
    const bad = await failure(plane, 'recovery.resolve', { runId, waitId: run.pending!.waitId, subjectHash: run.pending!.subjectHash, resolution: 'sideways' as 'retry' });
    expect(bad.code).toBe('AP_BAD_REQUEST');
    await call(plane, 'recovery.resolve', { runId, waitId: run.pending!.waitId, subjectHash: run.pending!.subjectHash, resolution: 'retry' });
    await plane.runtime.settled(runId);
    expect((await call(plane, 'runs.get', { runId })).outcome).toBe('succeeded');
    expect(callsIn(counter)).toBe(2); // the lost attempt and the retry
    const attempts = (await plane.journal.readRun(runId, 1, 100)).filter((r) => r.kind === 'EffectStarted');
    expect(attempts).toHaveLength(2);
  });
});
