/**
 * A team plane (docs/TEAM-PLANE.md): two plane instances on one PostgreSQL journal serve at
 * once. A run started at one is listed and decided at the other and finished where it is held;
 * an instance that stops leaves its open runs to the other, which journals the takeover and
 * finishes them, each effect performed once.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from './plane';
import type { Logger } from '../base/logger';
import { tempDataDir } from '../../tests/support/journal-support';
import { call, callsIn, countingProvider, testPlane } from '../../tests/support/runtime-support';
import { helper } from '../../tests/support/agent-tools-support';
import { freshDatabase, postgresMissing, postgresUrl } from '../../tests/support/postgres-support';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'runtime-child.ts');
const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

/**
 * An instance on `url` whose one agent asks a person before its model call (counted in
 * `counter`); `bundled`: the bundled agents instead, as the child instance runs them.
 */
async function instance(url: string, counter: string, bundled = false, logger?: Logger): Promise<Plane> {
  const plane = await testPlane({
    dataDir: tempDataDir('ap-team-'),
    ...(logger ? { logger } : {}),
    ...(bundled ? {} : { agents: [helper('guarded', { approve: true, provider: 'local' })] }),
    providers: new Map([['local', countingProvider(counter)]]),
    database: { url, source: 'test' },
    leaseCheckMs: 50,
    onLeaseLost: () => undefined,
  });
  planes.push(plane);
  return plane;
}

async function waitingAt(plane: Plane, runId: string) {
  await expect.poll(async () => (await call(plane, 'approvals.list', {})).waiting.some((w) => w.runId === runId), { timeout: 15_000 }).toBe(true);
  return call(plane, 'runs.get', { runId });
}

describe.skipIf(!postgresUrl())(`a team plane${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, () => {
  it('two instances serve at once; a run started at A is approved at B and finished by A, which holds it', async () => {
    const url = await freshDatabase('team');
    const counter = `${tempDataDir('ap-team-count-')}/calls`;
    const a = await instance(url, counter);
    const b = await instance(url, counter);
    expect(a.status().instance).toMatch(/^plane@/);
    expect(b.status().instance).not.toBe(a.status().instance);

    // B's clients hear of A's records on B's one cursor, journal.appended.
    const heardAtB: string[] = [];
    const unsubscribe = b.events.subscribe((event) => {
      if (event.name === 'journal.appended') heardAtB.push(...event.payload.runs.map((change) => change.runId));
    });
    const { runId } = await call(a, 'runs.start', { agent: 'guarded', input: { text: 'hello' } });
    await expect.poll(() => heardAtB.includes(runId), { timeout: 15_000 }).toBe(true);
    unsubscribe();
    const seen = await waitingAt(b, runId);
    expect(seen.host).toBe(a.status().instance);
    await call(b, 'approvals.decide', { runId, waitId: seen.pending!.waitId, decision: 'approve', subjectHash: seen.pending!.subjectHash });
    await expect.poll(async () => (await call(b, 'runs.get', { runId })).status, { timeout: 15_000 }).toBe('sealed');
    const done = await call(a, 'runs.get', { runId });
    expect(done).toMatchObject({ outcome: 'succeeded', host: a.status().instance });
    expect(callsIn(counter)).toBe(1);
    const records = await a.journal.readRun(runId, 1, 1000);
    expect(records.filter((r) => r.kind === 'RunAdopted')).toEqual([]);
  });

  it('an instance that stops leaves its open run to the other: taken over (journaled), approved there, the effect performed once', async () => {
    const url = await freshDatabase('takeover');
    const counter = `${tempDataDir('ap-team-count-')}/calls`;
    const a = await instance(url, counter);
    const b = await instance(url, counter);
    const hostA = a.status().instance!;
    const hostB = b.status().instance!;
    const { runId } = await call(a, 'runs.start', { agent: 'guarded', input: { text: 'carry on' } });
    await waitingAt(a, runId);
    await a.close();

    await expect.poll(async () => (await call(b, 'runs.get', { runId })).host, { timeout: 15_000 }).toBe(hostB);
    const adopted = (await b.journal.readRun(runId, 1, 1000)).filter((r) => r.kind === 'RunAdopted');
    expect(adopted.map((r) => r.body)).toEqual([{ from: hostA, to: hostB, reason: expect.stringContaining(`the lease of ${hostA} ended`) }]);
    const waiting = await waitingAt(b, runId);
    expect(callsIn(counter)).toBe(0);
    await call(b, 'approvals.decide', { runId, waitId: waiting.pending!.waitId, decision: 'approve', subjectHash: waiting.pending!.subjectHash });
    await expect.poll(async () => (await call(b, 'runs.get', { runId })).status, { timeout: 15_000 }).toBe('sealed');
    expect(await call(b, 'runs.get', { runId })).toMatchObject({ outcome: 'succeeded', result: '[local model] Summary: helper says carry on' });
    expect(callsIn(counter)).toBe(1);
  });

  it('an instance killed with SIGKILL while a model call is in flight: the other takes the run over, the call InDoubt in its recovery queue, retried once by a person', async () => {
    const url = await freshDatabase('killed');
    const counter = `${tempDataDir('ap-team-count-')}/calls`;
    const b = await instance(url, counter, true);
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'hang', tempDataDir('ap-team-child-'), counter], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, AGENTPLANE_DATABASE_URL: url } });
    const runId = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('IN-FLIGHT ') && resolve(line.slice('IN-FLIGHT '.length)));
      child.on('exit', (code) => reject(new Error(`the child instance exited (${code}) before its call was in flight`)));
    });
    const hostA = (await call(b, 'runs.get', { runId })).host;
    expect(hostA).toMatch(/^plane@/);
    expect(hostA).not.toBe(b.status().instance);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    await expect.poll(async () => (await call(b, 'recovery.list', {})).waiting.map((r) => r.runId), { timeout: 15_000 }).toEqual([runId]);
    const run = await call(b, 'runs.get', { runId });
    expect(run).toMatchObject({ host: b.status().instance, pending: { reason: 'recovery', subject: { effect: 'model', name: 'local' } } });
    const records = await b.journal.readRun(runId, 1, 100);
    expect(records.find((r) => r.kind === 'RunAdopted')?.body).toMatchObject({ from: hostA, to: b.status().instance });
    expect(records.find((r) => r.kind === 'EffectFailed')?.body).toMatchObject({ disposition: 'InDoubt', error: { code: 'InFlightAtStop' } });
    expect(callsIn(counter)).toBe(1); // the call the killed instance made; nothing repeated it

    await call(b, 'recovery.resolve', { runId, waitId: run.pending!.waitId, subjectHash: run.pending!.subjectHash, resolution: 'retry' });
    await expect.poll(async () => (await call(b, 'runs.get', { runId })).outcome, { timeout: 15_000 }).toBe('succeeded');
    expect(callsIn(counter)).toBe(2); // the lost attempt and the one retry
  });

  it("a run of an agent the first instance to look does not declare is left for one that does, not failed", async () => {
    const url = await freshDatabase('left');
    const counter = `${tempDataDir('ap-team-count-')}/calls`;
    const said: string[] = [];
    const b = await instance(url, counter, false, { log: (_level, message) => void said.push(message) });
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'suspend', tempDataDir('ap-team-child-'), counter], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, AGENTPLANE_DATABASE_URL: url } });
    const runId = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('SUSPENDED ') && resolve(line.slice('SUSPENDED '.length)));
      child.on('exit', (code) => reject(new Error(`the child instance exited (${code}) before its run waited`)));
    });
    const hostA = (await call(b, 'runs.get', { runId })).host;
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // B declares only `guarded`: it leaves the write-note run where it is, and says so.
    await expect.poll(() => said.find((line) => line.includes(`open run(s) of ${hostA} are left`)), { timeout: 15_000 }).toMatch(/1 open run\(s\) of plane@\S+ are left for an instance that declares write-note \(this one does not\)/);
    expect(await call(b, 'runs.get', { runId })).toMatchObject({ host: hostA, status: 'suspended' });

    // C declares it (the bundled agents): C takes it over, and it waits for a person there.
    const c = await instance(url, counter, true);
    await expect.poll(async () => (await call(c, 'runs.get', { runId })).host, { timeout: 15_000 }).toBe(c.status().instance);
    expect(await call(c, 'runs.get', { runId })).toMatchObject({ status: 'suspended' });
    expect((await c.journal.readRun(runId, 1, 100)).filter((r) => r.kind === 'RunAdopted').map((r) => r.body.to)).toEqual([c.status().instance]);
  });
});
