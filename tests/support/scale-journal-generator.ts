/**
 * A realistic journal of many records, for the scale probes (bench/scale-*.bench.ts) and
 * `scripts/scale-journal.mjs`: runs of every common shape (local runs of model and tool effects,
 * approvals with their Suspended and Decision, peer calls with the peer's own run, budget waits,
 * cancelled and failed runs, ACP observations) and a few very long runs (at 10,000,000 records,
 * one of 1,000,000 and three of 100,000), interleaved as a busy plane interleaves them.
 *
 * Every record goes through the real Journal (`appendBatch`, groups of BATCH), so its hash, the
 * chain, the Merkle tree and the signed checkpoints are the ones a plane writes; every run is
 * sealed by the end, so a plane opened on it has nothing to resume. The content is seeded and
 * the clock is the generator's (RECORD_SPACING_MS a record from START_MS), so two journals of the
 * same size hold the same runs at the same times (their keys, and so hashes, differ).
 *
 * A generated journal is kept in a cache under os.tmpdir() keyed by its size and
 * GENERATOR_VERSION (bump it when what is generated changes), so a bench reuses it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { AnyRecordDraft } from '../../src-shared/journal/records';
import type { Spend } from '../../src-shared/vocabulary/spend';
import type { WaitSubject } from '../../src-shared/vocabulary/waits';
import { Journal } from '../../src-main/journal/journal';
import { seededRandom, ZERO_SPEND } from './journal-support';

export const GENERATOR_VERSION = 3;
export const DEFAULT_SCALE_RECORDS = 10_000_000;
/** Records a commit: the size of a busy plane's group commits, and one fsync each. */
export const BATCH = 1000;
const START_MS = Date.UTC(2026, 0, 1);
/** 250 ms a record: 10,000,000 records span about 29 days. */
const RECORD_SPACING_MS = 250;
/** How many records of a long run go into the stream at a time, between other runs. */
const LONG_RUN_SLICE = 100;

export interface ScaleProgress {
  written: number;
  records: number;
  elapsedMs: number;
}

export interface GeneratedJournal {
  dataDir: string;
  records: number;
  /** Time to write it, when written now (absent when taken from the cache). */
  seconds?: number;
  /** Bytes of the data dir (the SQLite file, its WAL, keys, checkpoints). */
  bytes: number;
  /** The generation's own report, kept in the cache beside it. */
  generatedSeconds: number;
  fromCache: boolean;
}

/** The sizes of the very long runs in a journal of `records` (each an even number ≥ 4). */
export function longRunSizes(records: number): number[] {
  const even = (n: number) => Math.max(4, Math.floor(n / 2) * 2);
  if (records < 1000) return [];
  const first = even(Math.min(1_000_000, records / 10));
  return [first, ...Array.from({ length: 3 }, () => even(first / 10))];
}

const WORDS = (
  'the invoice customer order shipped refund policy ticket account balance report quarterly summary draft email ' +
  'meeting notes schedule contract review approve budget estimate vendor payment delivery status update search ' +
  'result document page section figure table source citation answer question follow please check confirm total'
).split(' ');

/** Everything random in a journal comes from here, seeded, so a size always yields the same runs. */
class Source {
  private readonly random: () => number;
  private hexCounter = 0;

  /** `runs`: the count of runs admitted so far, shared by every source of one journal (runId). */
  constructor(
    seed: number,
    private readonly runs: { made: number },
  ) {
    this.random = seededRandom(seed);
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  text(minWords: number, maxWords: number): string {
    const n = this.int(minWords, maxWords);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(this.pick(WORDS));
    return words.join(' ');
  }

  /** `digits` lowercase hex digits, distinct across calls (a counter mixed into the random ones). */
  hex(digits: number): string {
    this.hexCounter += 1;
    let out = this.hexCounter.toString(16);
    while (out.length < digits) out += Math.floor(this.random() * 0x1_0000_0000).toString(16).padStart(8, '0');
    return out.slice(0, digits);
  }

  /**
   * A run id as the plane makes them (src-main/base/random-ids.ts newRunId): 8 hex digits that
   * rise with the time the run was admitted, then 12 random. Ids that rise keep the index of
   * runs' records appending near its right edge, as a real journal's does; random ones (this
   * generator's first ids) scattered a 10,000,000-record journal's appends over the whole index.
   */
  runId(): string {
    this.runs.made += 1;
    let random = '';
    while (random.length < 12) random += Math.floor(this.random() * 0x1_0000_0000).toString(16).padStart(8, '0');
    return `run-${this.runs.made.toString(16).padStart(8, '0')}${random.slice(0, 12)}`;
  }
}

const OWNERS = ['user:local', 'user:ana', 'user:bo', 'user:chen', 'user:dee'];
const TOOLS = ['search', 'read_file', 'http_get', 'calculator', 'crm_lookup'];
const PEERS = ['billing', 'research', 'support'];

function subjectHash(subject: WaitSubject): string {
  return createHash('sha256').update(canonicalize(subject)).digest('hex');
}

/** One run's drafts as they are written, step by step, with its spend so far. */
class RunWriter {
  readonly drafts: AnyRecordDraft[] = [];
  spend: Spend = { ...ZERO_SPEND };
  step = 0;

  constructor(
    private readonly source: Source,
    readonly runId: string,
    readonly agent: string,
    readonly owner: string,
    admission: Partial<{ trigger: 'cli' | 'web' | 'peer' | 'mcp'; maxCostMicros: number; parentRunId: string; parentStep: number; host: string }> = {},
  ) {
    this.drafts.push({
      runId,
      kind: 'RunAdmitted',
      body: {
        agent,
        owner,
        chain: admission.host ? [owner, 'plane'] : [owner],
        input: { text: source.text(5, 30) },
        inputProvenance: admission.trigger === 'peer' ? 'plane' : owner,
        budget: admission.maxCostMicros !== undefined ? { maxEffects: 10_000_000, maxCostMicros: admission.maxCostMicros } : { maxEffects: 10_000_000 },
        trigger: { via: admission.trigger ?? source.pick(['cli', 'web', 'mcp'] as const), by: admission.trigger === 'peer' ? 'plane' : owner },
        ...(admission.parentRunId !== undefined ? { parentRunId: admission.parentRunId, parentStep: admission.parentStep ?? 0 } : {}),
        ...(admission.host !== undefined ? { host: admission.host } : {}),
      },
    });
  }

  private key(): string {
    return this.source.hex(64);
  }

  private addSpend(spend: Spend): void {
    this.spend = {
      effects: this.spend.effects + spend.effects,
      inputTokens: this.spend.inputTokens + spend.inputTokens,
      outputTokens: this.spend.outputTokens + spend.outputTokens,
      reasoningTokens: this.spend.reasoningTokens + spend.reasoningTokens,
      costMicros: this.spend.costMicros + spend.costMicros,
    };
  }

  model(): void {
    const s = this.source;
    const step = this.step++;
    const key = this.key();
    this.drafts.push({
      runId: this.runId,
      kind: 'EffectStarted',
      body: { step, effect: 'model', name: 'anthropic', key, request: { model: 'claude-sonnet', maxTokens: 1024, messages: [{ role: 'user', content: s.text(20, 90) }] }, destination: 'https://api.anthropic.com' },
    });
    const spend = { effects: 1, inputTokens: s.int(200, 4000), outputTokens: s.int(50, 900), reasoningTokens: 0, costMicros: s.int(500, 30_000) };
    this.addSpend(spend);
    this.drafts.push({ runId: this.runId, kind: 'EffectDone', body: { step, key, result: { text: s.text(15, 120), stopReason: 'end_turn' }, spend, provenance: 'model:anthropic' } });
  }

  tool(): void {
    const s = this.source;
    const step = this.step++;
    const key = this.key();
    const name = s.pick(TOOLS);
    this.drafts.push({ runId: this.runId, kind: 'EffectStarted', body: { step, effect: 'tool', name, key, request: { query: s.text(2, 8) } } });
    const hits = Array.from({ length: s.int(1, 4) }, () => ({ title: s.text(3, 8), url: `https://example.com/${s.hex(8)}` }));
    const spend = { ...ZERO_SPEND, effects: 1 };
    this.addSpend(spend);
    this.drafts.push({ runId: this.runId, kind: 'EffectDone', body: { step, key, result: { hits }, spend, provenance: 'plane' } });
  }

  effects(count: number): void {
    for (let i = 0; i < count; i++) {
      if (this.source.chance(0.5)) this.model();
      else this.tool();
    }
  }

  /** A wait for a person before the next effect, and their decision on it. */
  wait(subject: WaitSubject, decision: 'approve' | 'deny', by: string, value?: { kind: 'budget'; budget: { maxEffects: number; maxCostMicros: number } }): void {
    const step = this.step;
    const waitId = `${this.runId}/${step}/${subject.kind}`;
    const hash = subjectHash(subject);
    this.drafts.push({ runId: this.runId, kind: 'Suspended', body: { step, reason: subject.kind, waitId, subject, subjectHash: hash } });
    this.drafts.push({ runId: this.runId, kind: 'Decision', body: { waitId, decision, by, subjectHash: hash, ...(value ? { value } : {}) } });
  }

  approval(decision: 'approve' | 'deny'): void {
    const s = this.source;
    const subject: WaitSubject = {
      kind: 'approval',
      effect: 'tool',
      name: 'send_email',
      request: { to: `${s.hex(6)}@example.com`, subject: s.text(3, 8) },
      destination: null,
      estimate: { ...ZERO_SPEND, effects: 1 },
      agent: this.agent,
      owner: this.owner,
      chain: [this.owner],
    };
    this.wait(subject, decision, this.owner);
  }

  seal(outcome: 'succeeded' | 'cancelled' | 'denied' | 'failed' | 'observed', extra: { result?: unknown; error?: { code: 'EffectError'; message: string } } = {}): AnyRecordDraft[] {
    this.drafts.push({ runId: this.runId, kind: 'RunSealed', body: { outcome, ...extra, spend: this.spend, records: this.drafts.length } });
    return this.drafts;
  }
}

/** The run shapes and how often each comes (weights out of 100). */
function shortRun(s: Source): AnyRecordDraft[] {
  const roll = s.int(1, 100);
  const owner = s.pick(OWNERS);
  if (roll <= 45) {
    const run = new RunWriter(s, s.runId(), 'assistant', owner);
    run.effects(s.int(1, 12));
    return run.seal('succeeded', { result: { text: s.text(10, 60) } });
  }
  if (roll <= 60) {
    const run = new RunWriter(s, s.runId(), 'mailer', owner);
    run.effects(s.int(1, 4));
    const approved = s.chance(0.8);
    run.approval(approved ? 'approve' : 'deny');
    if (!approved) return run.seal('denied');
    run.tool();
    return run.seal('succeeded', { result: { sent: true } });
  }
  if (roll <= 72) return peerCall(s, owner);
  if (roll <= 80) {
    const run = new RunWriter(s, s.runId(), 'analyst', owner, { maxCostMicros: 50_000 });
    run.effects(s.int(2, 6));
    const budget = { maxEffects: 10_000_000, maxCostMicros: 50_000 };
    const next = { effect: 'model' as const, name: 'anthropic', estimate: { ...ZERO_SPEND, effects: 1, costMicros: 30_000 } };
    run.drafts.push({ runId: run.runId, kind: 'BudgetVerdict', body: { step: run.step, verdict: 'ceilingReached', ceiling: 'cost', spent: run.spend, budget } });
    const raised = { maxEffects: 10_000_000, maxCostMicros: run.spend.costMicros + 200_000 };
    run.wait({ kind: 'budget', ceiling: 'cost', spent: run.spend, budget, next, agent: run.agent, owner }, 'approve', owner, { kind: 'budget', budget: raised });
    run.drafts.push({ runId: run.runId, kind: 'BudgetVerdict', body: { step: run.step, verdict: 'raised', ceiling: 'cost', spent: run.spend, budget: raised } });
    run.effects(s.int(1, 4));
    return run.seal('succeeded', { result: { text: s.text(10, 40) } });
  }
  if (roll <= 86) {
    const run = new RunWriter(s, s.runId(), 'assistant', owner);
    run.effects(s.int(0, 5));
    run.drafts.push({ runId: run.runId, kind: 'Cancelled', body: { by: owner, reason: 'no longer needed', atStep: run.step } });
    return run.seal('cancelled');
  }
  if (roll <= 90) {
    const run = new RunWriter(s, s.runId(), 'assistant', owner);
    run.effects(s.int(0, 4));
    const step = run.step++;
    const key = s.hex(64);
    run.drafts.push({ runId: run.runId, kind: 'EffectStarted', body: { step, effect: 'tool', name: 'http_get', key, request: { url: `https://example.com/${s.hex(8)}` } } });
    const error = { code: 'EffectError' as const, message: 'connect ECONNREFUSED' };
    run.drafts.push({ runId: run.runId, kind: 'EffectFailed', body: { step, key, disposition: 'DidNotHappen', error, spend: { ...ZERO_SPEND } } });
    return run.seal('failed', { error });
  }
  return observedSession(s, owner, s.int(3, 40));
}

/** A plane run calling a peer's skill: the peer's own run (admitted by the plane, host the peer) nested inside the effect. */
function peerCall(s: Source, owner: string): AnyRecordDraft[] {
  const peer = s.pick(PEERS);
  const parent = new RunWriter(s, s.runId(), 'coordinator', owner);
  parent.effects(s.int(0, 3));
  const step = parent.step++;
  const key = s.hex(64);
  const destination = `peer:${peer}`;
  parent.drafts.push({
    runId: parent.runId,
    kind: 'EffectStarted',
    body: { step, effect: 'peer', name: `${peer}.ask`, key, request: { question: s.text(5, 25) }, destination, credential: { kind: 'plane', audience: destination } },
  });
  const child = new RunWriter(s, s.runId(), peer, owner, { trigger: 'peer', parentRunId: parent.runId, parentStep: step, host: destination });
  child.effects(s.int(1, 6));
  const answer = { text: s.text(10, 50) };
  const childDrafts = child.seal('succeeded', { result: answer });
  const spend = { ...child.spend, effects: child.spend.effects + 1 };
  parent.drafts.push(...childDrafts);
  parent.drafts.push({ runId: parent.runId, kind: 'EffectDone', body: { step, key, result: answer, spend, provenance: destination } });
  parent.spend = { ...parent.spend, effects: parent.spend.effects + spend.effects, inputTokens: parent.spend.inputTokens + spend.inputTokens, outputTokens: parent.spend.outputTokens + spend.outputTokens, costMicros: parent.spend.costMicros + spend.costMicros };
  // RunSealed counts the run's own records: the child's are in the stream but not the parent's.
  const own = parent.drafts.filter((d) => d.runId === parent.runId);
  const sealed: AnyRecordDraft = { runId: parent.runId, kind: 'RunSealed', body: { outcome: 'succeeded', result: answer, spend: parent.spend, records: own.length } };
  return [...parent.drafts, sealed];
}

/** An ACP session observed through the tap: `records` records in all (observations, then the seal). */
function observedSession(s: Source, owner: string, records: number): AnyRecordDraft[] {
  const runId = s.runId();
  const sessionId = `sess_${s.hex(16)}`;
  const drafts: AnyRecordDraft[] = [];
  for (let i = 0; i < records - 1; i++) {
    const update = s.pick(['agent_message_chunk', 'tool_call', 'tool_call_update', 'plan']);
    drafts.push({ runId, kind: 'Observation', body: { source: 'acp', sessionId, update, detail: { text: s.text(3, 40), by: owner } } });
  }
  drafts.push({ runId, kind: 'RunSealed', body: { outcome: 'observed', result: { stopReason: 'end_turn' }, spend: { ...ZERO_SPEND }, records: drafts.length } });
  return drafts;
}

/** A very long run of exactly `records` records (even, ≥ 4), handed out a slice at a time. */
function* longRun(s: Source, records: number): Generator<AnyRecordDraft> {
  const run = new RunWriter(s, s.runId(), 'batch-indexer', 'user:local');
  const effects = (records - 2) / 2;
  for (let i = 0; i < effects; i++) {
    if (i % 2 === 0) run.model();
    else run.tool();
    // The writer's list stays short: what is handed out is dropped from it.
    yield* run.drafts.splice(0);
  }
  run.drafts.push({ runId: run.runId, kind: 'RunSealed', body: { outcome: 'succeeded', result: { indexed: effects }, spend: run.spend, records: records - 1 } });
  yield* run.drafts.splice(0);
}

/**
 * Exactly `records` drafts: short runs, with the long runs' slices interleaved in proportion
 * (a long run advances as the short ones do, so it spans most of the journal), every run sealed.
 * Run ids rise from `firstRun` (drafts appended to an existing journal start past its runs, as a
 * plane's new runs are admitted after its old ones).
 */
export function* scaleDrafts(records: number, seed = 1, firstRun = 0): Generator<AnyRecordDraft> {
  const runs = { made: firstRun };
  const s = new Source(seed, runs);
  const longSizes = longRunSizes(records);
  const longTotal = longSizes.reduce((a, b) => a + b, 0);
  const shortTotal = records - longTotal;
  // Each long run advances in step with its size, so all of them span the whole journal at once.
  const longs = longSizes.map((size, i) => ({ size, taken: 0, drafts: longRun(new Source(seed + 1000 * (i + 1), runs), size) }));
  let longWritten = 0;
  let shortWritten = 0;
  const takeLong = function* (): Generator<AnyRecordDraft> {
    const behind = longs.reduce((a, b) => (b.taken / b.size < a.taken / a.size ? b : a));
    for (let i = 0; i < LONG_RUN_SLICE; i++) {
      const next = behind.drafts.next();
      if (next.done) {
        longs.splice(longs.indexOf(behind), 1);
        return;
      }
      behind.taken += 1;
      longWritten += 1;
      yield next.value;
    }
  };
  while (shortWritten < shortTotal) {
    while (longs.length > 0 && longWritten * shortTotal < shortWritten * longTotal) yield* takeLong();
    const left = shortTotal - shortWritten;
    // The last short run is an observed session of exactly what is left, so the count is exact.
    const run = left <= 120 ? observedSession(s, 'user:local', left) : shortRun(s);
    shortWritten += run.length;
    yield* run;
  }
  while (longs.length > 0) yield* takeLong();
}

/**
 * Writes a journal of `records` records into `dataDir` (which must hold none yet) through
 * Journal.appendBatch in groups of BATCH; `onProgress` hears after each group.
 */
export async function generateScaleJournal(options: { records: number; dataDir: string; onProgress?: (p: ScaleProgress) => void }): Promise<{ seconds: number }> {
  const { records, dataDir } = options;
  if (!Number.isSafeInteger(records) || records < 1) throw new Error(`--records must be a whole number of at least 1, not ${records}`);
  let written = 0;
  const journal = await Journal.open({ dataDir, now: () => START_MS + written * RECORD_SPACING_MS, sealPayloads: false });
  const started = performance.now();
  try {
    const head = (await journal.head()).seq;
    if (head !== 0) throw new Error(`${dataDir} already holds a journal of ${head} records: give an empty or new data dir`);
    let batch: AnyRecordDraft[] = [];
    for (const draft of scaleDrafts(records)) {
      batch.push(draft);
      if (batch.length === BATCH) {
        await journal.appendBatch(batch);
        written += batch.length;
        batch = [];
        options.onProgress?.({ written, records, elapsedMs: performance.now() - started });
      }
    }
    if (batch.length > 0) {
      await journal.appendBatch(batch);
      written += batch.length;
      options.onProgress?.({ written, records, elapsedMs: performance.now() - started });
    }
    if (written !== records) throw new Error(`generated ${written} records, expected ${records}`);
  } finally {
    await journal.close();
  }
  return { seconds: (performance.now() - started) / 1000 };
}

/** Bytes of every file under `dir`. */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(path) : statSync(path).size;
  }
  return total;
}

/** Where the cache keeps the journal of `records` records (its data dir is `data` under it). */
export function scaleCacheDir(records: number): string {
  return join(tmpdir(), 'agentplane-scale-journal', `v${GENERATOR_VERSION}-${records}`);
}

const DONE_FILE = 'generated.json';

/**
 * The cached journal of `records` records, generated into the cache first when it is not there
 * (or a generation was cut short: no DONE_FILE). Never written to afterwards: a probe that
 * appends works on a copy.
 */
export async function cachedScaleJournal(records: number, onProgress?: (p: ScaleProgress) => void): Promise<GeneratedJournal> {
  const dir = scaleCacheDir(records);
  const dataDir = join(dir, 'data');
  const done = join(dir, DONE_FILE);
  if (existsSync(done)) {
    const saved = JSON.parse(readFileSync(done, 'utf8')) as { records: number; seconds: number; bytes: number };
    return { dataDir, records: saved.records, bytes: saved.bytes, generatedSeconds: saved.seconds, fromCache: true };
  }
  rmSync(dir, { recursive: true, force: true });
  // Private all the way down: Journal.open refuses a data dir under a folder others may write.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { seconds } = await generateScaleJournal({ records, dataDir, ...(onProgress ? { onProgress } : {}) });
  const bytes = dirBytes(dataDir);
  writeFileSync(done, `${JSON.stringify({ records, seconds, bytes, version: GENERATOR_VERSION })}\n`);
  return { dataDir, records, seconds, bytes, generatedSeconds: seconds, fromCache: false };
}
