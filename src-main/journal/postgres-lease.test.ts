/**
 * Instance leases on a shared PostgreSQL journal (postgres-lease.ts): several instances hold
 * their own at once; an instance's own lease held elsewhere makes it wait; a lost lease fences
 * every later append; a killed instance's lease is claimable at once, by one instance only, and
 * what it left open is found and adopted.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from './journal';
import { runsHeldBy } from './journal-scan';
import type { InstanceHolder } from './journal-store';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../../tests/support/postgres-support';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'journal-append-child.ts');

const journals: Journal[] = [];
const children: Array<ReturnType<typeof spawn>> = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

async function opened(url: string): Promise<Journal> {
  const journal = await Journal.open({ dataDir: tempDataDir('ap-lease-'), databaseUrl: url });
  journals.push(journal);
  return journal;
}

const holder = (journal: Journal, host: string): InstanceHolder => ({ host, pid: process.pid, hostname: 'test', dataDir: journal.dataDir, since: new Date().toISOString() });
const quiet = { onWaiting: () => expect.fail('waited for a lease nobody holds'), onLost: () => undefined };

/** A child process holding `host`'s lease with one open run of that host; answers the run's id. */
async function leaseHolderChild(url: string, host: string): Promise<{ child: ReturnType<typeof spawn>; runId: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'lease', '--data-dir', tempDataDir('ap-lease-child-'), '--database', url, '--host', host], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const runId = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('LEASED ') && resolve(line.slice('LEASED '.length)));
    child.on('exit', () => reject(new Error(`the child exited before holding the lease: ${stderr}`)));
  });
  return { child, runId };
}

describe.skipIf(!postgresUrl())(`instance leases${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, () => {
  it('two instances hold their own leases at once, each sees the other alive, and neither can claim a live one', async () => {
    const url = await freshDatabase('lease');
    const a = (await (await opened(url)).holdInstanceLease(holder(journals[0]!, 'plane@a'), quiet))!;
    const b = (await (await opened(url)).holdInstanceLease(holder(journals[1]!, 'plane@b'), quiet))!;
    expect((await a.instances()).map((i) => [i.host, i.alive])).toEqual([
      ['plane@a', true],
      ['plane@b', true],
    ]);
    expect(await a.tryClaim('plane@b')).toBe(false);
    expect(await b.tryClaim('plane@a')).toBe(false);
    expect(await a.tryClaim('plane@a')).toBe(false); // never its own
    // Both append, chained one after the other, under their fences.
    const before = (await journals[0]!.head()).seq;
    await journals[0]!.appendBatch(runDrafts('run-a', 1));
    await journals[1]!.appendBatch(runDrafts('run-b', 1));
    expect((await journals[0]!.head()).seq).toBe(before + 2 * runDrafts('run-a', 1).length);
  });

  it("an instance whose own lease is held waits, told by whom, and starts when it is let go; a waiting start can be aborted", async () => {
    const url = await freshDatabase('wait');
    const first = await opened(url);
    await first.holdInstanceLease(holder(first, 'plane@same'), quiet);
    const second = await opened(url);
    let told: InstanceHolder | null = null;
    let held = false;
    const waiting = new Promise<void>((resolve) => {
      void second.holdInstanceLease(holder(second, 'plane@same'), { onWaiting: (current) => ((told = current), resolve()), onLost: () => undefined }).then(() => (held = true));
    });
    await waiting;
    expect(told).toMatchObject({ host: 'plane@same', dataDir: first.dataDir });
    expect(held).toBe(false);
    await first.close();
    await expect.poll(() => held, { timeout: 15_000 }).toBe(true);

    const third = await opened(url);
    const controller = new AbortController();
    const attempt = third.holdInstanceLease(holder(third, 'plane@same'), { onWaiting: () => controller.abort(), onLost: () => undefined, signal: controller.signal });
    await expect(attempt).rejects.toThrow(/stopped while waiting for this instance's lease on postgres:\/\/postgres:\*\*\*@/);
  });

  it('a lost lease is told at once and fences every later append: nothing more is written', async () => {
    const url = await freshDatabase('fence');
    const journal = await opened(url);
    let lost = '';
    await journal.holdInstanceLease(holder(journal, 'plane@fenced'), { onWaiting: () => undefined, onLost: (reason) => (lost = reason) });
    await journal.appendBatch(runDrafts('before', 1));
    const head = (await journal.head()).seq;
    await sql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agentplane-lease' AND datname = current_database()");
    // At once, before the client has even heard its session end: the fence inside the append refuses it.
    await expect(journal.appendBatch(runDrafts('after', 1))).rejects.toThrow(/lease on postgres:\/\/postgres:\*\*\*@.+ (is no longer held|ended): nothing was written/);
    await expect.poll(() => lost, { timeout: 15_000 }).toMatch(/^the session holding this instance's lease on postgres:\/\/postgres:\*\*\*@.+ ended$/);
    await expect(journal.appendBatch(runDrafts('later', 1))).rejects.toThrow(/nothing was written/);
    expect((await journal.head()).seq).toBe(head);
  });

  it('a killed instance: its lease is claimable at once by one instance only, its open run found, adopted, and its lease let go', async () => {
    const url = await freshDatabase('killed');
    const { child, runId } = await leaseHolderChild(url, 'plane@dead');
    const b = await opened(url);
    const c = await opened(url);
    const leaseB = (await b.holdInstanceLease(holder(b, 'plane@b'), quiet))!;
    const leaseC = (await c.holdInstanceLease(holder(c, 'plane@c'), quiet))!;
    expect(await leaseB.tryClaim('plane@dead')).toBe(false);
    expect((await leaseB.instances()).find((i) => i.host === 'plane@dead')?.alive).toBe(true);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    await expect.poll(() => leaseB.tryClaim('plane@dead'), { timeout: 15_000, interval: 20 }).toBe(true);
    expect(await leaseC.tryClaim('plane@dead')).toBe(false); // B holds it while it adopts
    expect(await runsHeldBy(b, 'plane@dead')).toEqual([runId]);
    await b.append({ runId, kind: 'RunAdopted', body: { from: 'plane@dead', to: 'plane@b', reason: 'test' } });
    await leaseB.release('plane@dead', true);
    expect(await runsHeldBy(c, 'plane@dead')).toEqual([]);
    expect(await runsHeldBy(c, 'plane@b')).toEqual([runId]);
    // Released: no longer listed, so nobody looks at it again until its own process returns.
    expect((await leaseC.instances()).map((i) => i.host)).toEqual(['plane@b', 'plane@c']);
  });

  it('one instance at a time signs the periodic checkpoints; when it stops, the next look of another takes the role', async () => {
    const url = await freshDatabase('signer');
    const first = await Journal.open({ dataDir: tempDataDir('ap-lease-'), databaseUrl: url, checkpointEvery: 5 });
    const second = await Journal.open({ dataDir: tempDataDir('ap-lease-'), databaseUrl: url, checkpointEvery: 5 });
    journals.push(first, second);
    const leaseA = (await first.holdInstanceLease(holder(first, 'plane@first'), quiet))!;
    const leaseB = (await second.holdInstanceLease(holder(second, 'plane@second'), quiet))!;
    expect([leaseA.signer, leaseB.signer]).toEqual([true, false]);
    const signedBy = (journal: Journal) => journal.checkpoints.readAll().length;
    const [beforeA, beforeB] = [signedBy(first), signedBy(second)];
    for (let i = 0; i < 4; i++) await second.appendBatch(runDrafts(`b-${i}`, 1));
    // The second's appends crossed the interval four times: it signed none of them.
    expect(signedBy(second)).toBe(beforeB);
    for (let i = 0; i < 4; i++) await first.appendBatch(runDrafts(`a-${i}`, 1));
    expect(signedBy(first)).toBeGreaterThan(beforeA);

    await first.close();
    await leaseB.instances(); // a look
    expect(leaseB.signer).toBe(true);
    const now = signedBy(second);
    for (let i = 0; i < 4; i++) await second.appendBatch(runDrafts(`c-${i}`, 1));
    expect(signedBy(second)).toBeGreaterThan(now);
  });
});
