/**
 * Crash safety: a writer killed with SIGKILL at any moment leaves a journal that is intact,
 * verifies from its first record, holds every record it acknowledged, and that the next
 * process continues.
 *
 * A child (tests/helpers/journal-append-child.ts) appends in a loop and prints `ACK <seq>
 * <hash>` only after each append promise resolved; the parent kills it at a random point (after
 * a random number of acknowledgements, or after a random delay that can land in its start-up,
 * in `Journal.open` or in the checkpoint written there), then checks the data dir:
 * `PRAGMA integrity_check` from a plain connection, `verifyJournalStore` after `Journal.open`
 * (which signs a checkpoint over what the killed process left unsigned, as intended), every
 * acknowledged seq present with the acknowledged hash, no gap. Then the next child continues
 * the same chain.
 *
 * The kill points come from a seeded PRNG; the seed is printed, and AGENTPLANE_CRASH_SEED
 * replays a failing sequence. AGENTPLANE_CRASH_KILLS and AGENTPLANE_CRASH_APPENDS raise the
 * minimums (defaults 50 kills, 10,000 appended records); the records per kill adapt so that
 * both are reached.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { journalStoreOf, Journal } from './journal';
import { journalPath } from './sqlite-store';
import { seededRandom, tempDataDir } from '../../tests/support/journal-support';
import { verifyJournalStore } from './journal-workers';
import { freshDatabase, postgresMissing, postgresUrl } from '../../tests/support/postgres-support';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'journal-append-child.ts');
const KILLS = Math.max(50, Number(process.env.AGENTPLANE_CRASH_KILLS ?? 0) || 0);
const APPENDS = Math.max(10_000, Number(process.env.AGENTPLANE_CRASH_APPENDS ?? 0) || 0);
const SEED = Number(process.env.AGENTPLANE_CRASH_SEED ?? 0) || Math.floor(Math.random() * 2 ** 31);
// Measured on the project's 2-core machine: about 40 s for the defaults alone, about 90 s beside
// another test file (the unit tests run two files at a time), and it hit 120 s on a machine
// loaded by other work; the timeout scales with what was asked for.
const PG_KILLS = 20;
const PG_APPENDS = 2000;
const TIMEOUT_MS = Math.max(240_000, Math.ceil(Math.max(KILLS / 50, APPENDS / 10_000)) * 240_000);

type KillPlan = { after: 'acks'; count: number } | { after: 'delay'; ms: number };

interface ChildOutcome {
  /** Every acknowledged seq with the hash the child was given for it. */
  acks: Map<number, string>;
  openHead: number | null;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

interface ChildOptions {
  seed: number;
  runPrefix: string;
  checkpointEvery: number;
  /** Let the child's event loop turn after each append (so its periodic checkpoints get signed). */
  yieldEach: boolean;
}

/** Runs one appending child and SIGKILLs it per `plan`; resolves once it is dead and its stdout drained. */
function runAndKill(dataDir: string, options: ChildOptions, plan: KillPlan, database?: string): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const args = ['--data-dir', dataDir, '--seed', String(options.seed), '--run-prefix', options.runPrefix, '--checkpoint-every', String(options.checkpointEvery)];
    if (options.yieldEach) args.push('--yield');
    if (database) args.push('--database', database);
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'append', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const outcome: ChildOutcome = { acks: new Map(), openHead: null, signal: null, code: null, stderr: '' };
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      child.kill('SIGKILL');
    };
    const timer = plan.after === 'delay' ? setTimeout(kill, plan.ms) : null;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (outcome.stderr += chunk));
    // Lines keep arriving after the kill (they were in the pipe): each one is an acknowledgement
    // the child made before it died, so each one counts.
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const [word, seq, hash] = line.split(' ');
      if (word === 'OPEN') outcome.openHead = Number(seq);
      if (word === 'ACK') {
        outcome.acks.set(Number(seq), hash!);
        if (plan.after === 'acks' && outcome.acks.size >= plan.count) kill();
      }
    });
    child.on('error', reject);
    let exited = false;
    let drained = false;
    const finish = () => {
      if (exited && drained) resolve(outcome);
    };
    lines.on('close', () => {
      drained = true;
      finish();
    });
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      outcome.code = code;
      outcome.signal = signal;
      exited = true;
      finish();
    });
  });
}

/** What must hold after any crash; returns the head seq. */
async function checkAfterCrash(dataDir: string, acked: Map<number, string>, context: string, expectAllSigned = true, database?: string): Promise<number> {
  if (!database) {
    const raw = new Database(journalPath(dataDir));
    try {
      expect(raw.pragma('integrity_check', { simple: true }), `${context}: integrity_check`).toBe('ok');
    } finally {
      raw.close();
    }
  }
  const journal = await Journal.open({ dataDir, checkpointEvery: 500, ...(database ? { databaseUrl: database } : {}) });
  try {
    expect(await journalStoreOf(journal).integrityCheck(), `${context}: the store's integrity check`).toBe('ok');
    const head = await journal.head();
    const report = await verifyJournalStore(journal);
    expect(report, `${context}: verifyJournalStore`).toMatchObject({ ok: true });
    // Every record up to the head was checked: `count` signed ones, then any unsigned tail.
    expect(report.ok && report.count + report.unsigned, `${context}: records verified`).toBe(head.seq);
    // Journal.open signed a checkpoint over whatever the killed process left unsigned.
    if (expectAllSigned) expect(report, `${context}: every record signed after open`).toMatchObject({ unsigned: 0 });
    const maxAck = Math.max(0, ...acked.keys());
    expect(head.seq, `${context}: the head is at or after every acknowledged seq`).toBeGreaterThanOrEqual(maxAck);
    const rows = await journal.readRange(1, null, head.seq + 10);
    expect(rows.length, `${context}: readRange holds every seq up to the head`).toBe(head.seq);
    expect(rows.every((row, index) => row.seq === index + 1), `${context}: no gap`).toBe(true);
    // Every acknowledged record is there, with exactly the hash that was acknowledged.
    const hashes = await journalStoreOf(journal).readHashes(1, head.seq);
    const lost = [...acked].filter(([seq, hash]) => hashes[seq - 1] !== hash);
    expect(lost, `${context}: acknowledged records missing or different`).toEqual([]);
    return head.seq;
  } finally {
    await journal.close();
  }
}

/**
 * Kills writers until at least `minKills` kills and `minAppends` records, checking the journal after
 * each (checkAfterCrash): on the data dir's SQLite file, or in `database` (PostgreSQL).
 */
async function crashCycles(minKills: number, minAppends: number, database?: string): Promise<void> {
  console.log(`crash-safety seed ${SEED} (replay with AGENTPLANE_CRASH_SEED=${SEED}); ${minKills} kills, ${minAppends} records at least${database ? ' (PostgreSQL)' : ''}`);
  const random = seededRandom(SEED);
  const dataDir = tempDataDir('ap-crash-');
  const acked = new Map<number, string>();
  const started = performance.now();
  let kills = 0;
  let head = 0;
  let acknowledgements = 0;
  let killedBeforeOpen = 0;
  let delayKills = 0;
  // On PostgreSQL the data dir's first writable open admits its key (a KeyAdmitted record,
  // keyring.ts): done here, so every child continues the chain from a head this side knows.
  if (database) head = await checkAfterCrash(dataDir, acked, 'before the first kill', true, database);
  for (let cycle = 0; kills < minKills || head < minAppends; cycle++) {
    // Adaptive: spread what is left of the record target over the kills still to come.
    const perKill = Math.max(20, Math.ceil((minAppends - head) / Math.max(1, minKills - kills)));
    // The child acknowledges about 2.8 records per ACK (half single appends, half 1–5).
    const ackTarget = Math.max(1, Math.round(perKill / 2.8));
    const plan: KillPlan =
      random() < 0.2 ? { after: 'delay', ms: Math.floor(random() * 900) } : { after: 'acks', count: 1 + Math.floor(random() * 2 * ackTarget) };
    if (plan.after === 'delay') delayKills++;
    // Half the children let their event loop turn between appends, so their periodic
    // checkpoints are signed and written while they append and a kill can land in one.
    const options: ChildOptions = { seed: Math.floor(random() * 2 ** 31), runPrefix: `c${cycle}`, checkpointEvery: 500, yieldEach: random() < 0.5 };
    const context = `seed ${SEED}, cycle ${cycle} (${JSON.stringify(plan)}, ${JSON.stringify(options)})`;
    const outcome = await runAndKill(dataDir, options, plan, database);
    expect(outcome.signal, `${context}: the child died by SIGKILL, not by itself (stderr: ${outcome.stderr})`).toBe('SIGKILL');
    kills++;
    if (outcome.openHead === null) killedBeforeOpen++;
    else expect(outcome.openHead, `${context}: the child continued the chain`).toBe(head);
    for (const [seq, hash] of outcome.acks) acked.set(seq, hash);
    acknowledgements += outcome.acks.size;
    head = await checkAfterCrash(dataDir, acked, context, true, database);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `crash-safety: ${kills} kills (${delayKills} after a random delay, ${killedBeforeOpen} before the journal was open), ` +
      `${head} records committed, ${acknowledgements} acknowledgements, ${seconds.toFixed(1)} s`,
  );
  expect(kills).toBeGreaterThanOrEqual(minKills);
  expect(head).toBeGreaterThanOrEqual(minAppends);
}

describe('journal crash safety (SIGKILL mid-append)', () => {
  it(`survives at least ${KILLS} kills across at least ${APPENDS} appended records`, () => crashCycles(KILLS, APPENDS), TIMEOUT_MS);

  // The same kills on PostgreSQL: a commit acknowledged only once durable, a killed writer's
  // transaction rolled back by the server, the chain continued by the next process. Fewer
  // cycles than SQLite's (each opens a pool), enough to land kills in open, append and checkpoint.
  it.skipIf(!postgresUrl())(
    `on PostgreSQL too: survives ${PG_KILLS} kills across ${PG_APPENDS} appended records${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`,
    async () => crashCycles(PG_KILLS, PG_APPENDS, await freshDatabase('crash')),
    TIMEOUT_MS,
  );

  /** Kills one child mid-stream with frequent checkpoints; returns its data dir and what it acknowledged. */
  async function killedWithCheckpoints(): Promise<{ dataDir: string; acks: Map<number, string> }> {
    const dataDir = tempDataDir('ap-crash-ckpt-');
    const outcome = await runAndKill(dataDir, { seed: 7, runPrefix: 'torn', checkpointEvery: 20, yieldEach: true }, { after: 'acks', count: 60 });
    expect(outcome.signal).toBe('SIGKILL');
    return { dataDir, acks: outcome.acks };
  }

  /** Cuts the checkpoint log's last line in half, as a crash in the middle of writing it would. */
  function tearLastCheckpointLine(dataDir: string): { file: string; linesBefore: number } {
    const file = join(dataDir, 'checkpoints', 'checkpoints.jsonl');
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const lastStart = text.lastIndexOf('\n', text.length - 2) + 1;
    writeFileSync(file, text.slice(0, lastStart + Math.floor((text.length - lastStart) / 2)));
    return { file, linesBefore: lines.length };
  }

  it('a checkpoint line torn mid-write is skipped: the log stays readable and the journal verifies', async () => {
    const { dataDir, acks } = await killedWithCheckpoints();
    const { linesBefore } = tearLastCheckpointLine(dataDir);

    // Read-only first: nothing is re-signed, so the torn line is all the verifier has at the end.
    const reader = await Journal.open({ dataDir, readOnly: true });
    try {
      expect(reader.checkpoints.readAll()).toHaveLength(linesBefore - 1);
      const head = await reader.head();
      // Read-only: what the killed writer left after its last whole checkpoint is an unsigned tail.
      const report = await verifyJournalStore(reader);
      expect(report).toMatchObject({ ok: true });
      expect(report.ok && report.count + report.unsigned).toBe(head.seq);
      expect(head.seq).toBeGreaterThanOrEqual(Math.max(...acks.keys()));
    } finally {
      await reader.close();
    }
    // Then as the next process would: open (signing what is unsigned), verify, append, verify.
    // Not every record is signed right after this open: see the known bug below.
    const acked = await checkAfterCrash(dataDir, acks, 'after a torn checkpoint line', false);
    const next = await runAndKill(dataDir, { seed: 8, runPrefix: 'after-torn', checkpointEvery: 20, yieldEach: true }, { after: 'acks', count: 10 });
    expect(next.openHead).toBe(acked);
    await checkAfterCrash(dataDir, new Map([...acks, ...next.acks]), 'after a torn checkpoint line and another writer');
  }, 30_000);

  // Regression: after a torn last line (no trailing newline) the next checkpoint starts a line
  // of its own instead of being glued onto the fragment.
  it('the checkpoint written after a torn line is readable', async () => {
    const { dataDir } = await killedWithCheckpoints();
    tearLastCheckpointLine(dataDir);
    const journal = await Journal.open({ dataDir, checkpointEvery: 500 });
    try {
      const head = await journal.head();
      const sizes = journal.checkpoints.readAll().map((jws) => (JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as { treeSize: number }).treeSize);
      expect(sizes).toContain(head.seq);
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, unsigned: 0 });
    } finally {
      await journal.close();
    }
  }, 30_000);

  // Regression: checkpoints are signed synchronously, so a writer awaiting appends back to back
  // (a pure chain of microtasks: better-sqlite3 answers synchronously) still writes every
  // periodic checkpoint that falls due.
  it('a writer appending back to back still writes its periodic checkpoints', async () => {
    const dataDir = tempDataDir('ap-crash-starved-');
    const outcome = await runAndKill(dataDir, { seed: 9, runPrefix: 'busy', checkpointEvery: 20, yieldEach: false }, { after: 'acks', count: 200 });
    expect(outcome.signal).toBe('SIGKILL');
    const reader = await Journal.open({ dataDir, readOnly: true });
    try {
      const head = await reader.head();
      expect(head.seq).toBeGreaterThanOrEqual(400);
      // At least one checkpoint per 20 records, give or take the ones in flight at the kill.
      expect(reader.checkpoints.readAll().length).toBeGreaterThanOrEqual(Math.floor(head.seq / 20) - 5);
    } finally {
      await reader.close();
    }
  }, 30_000);
});
