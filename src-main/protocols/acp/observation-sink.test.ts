/**
 * ResilientSink in front of the real journal (JournalSink on a temp data dir): a write that
 * fails is retried, then written record by record, and what the journal still will not take is
 * a counted gap in its run, so one refused record never takes its commit's neighbours with it
 * and a run that lost records never reads as complete. Failures are the journal's own (a record
 * it refuses) or a commit that fails once (a sink that throws before passing a write on).
 */
import { describe, expect, it } from 'vitest';
import { Journal } from '../../journal/journal';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { FallbackSink, JournalSink, ResilientSink, type ObservationSink } from './observation-sink';
import type { ObservationDraft, RunWrite } from './session-runs';

const tempDir = useTempFolders('agentplane-observation-sink-');

const message = (wire: number, text: string): ObservationDraft => ({ update: 'message', detail: { dir: 'toEditor', wire, at: '2026-01-01T00:00:00.000Z', message: { jsonrpc: '2.0', method: 'session/update', params: { text } } } });
const started: ObservationDraft = { update: 'tap/started', detail: { at: '2026-01-01T00:00:00.000Z', tapName: 't', policy: 'observe', command: ['agent'] } };
const end = { at: '2026-01-01T00:00:01.000Z', reason: 'agent-exit' as const, exitCode: 0, signal: null, stderrTail: '' };

/** Passes writes to the real sink, failing the first `failures` of them before they reach it. */
class FailingFirst implements ObservationSink {
  attempts = 0;
  constructor(
    private readonly inner: ObservationSink,
    private failures: number,
  ) {}
  async write(write: RunWrite): Promise<void> {
    this.attempts += 1;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('database is locked');
    }
    await this.inner.write(write);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function runRecords(dataDir: string, runId: string) {
  const journal = await Journal.open({ dataDir, readOnly: true });
  try {
    return await journal.readRun(runId, 1, 1000);
  } finally {
    await journal.close();
  }
}

describe('ResilientSink', () => {
  it('retries a failed commit, and nothing is lost or said when the retry succeeds', async () => {
    const dataDir = tempDir();
    const notices: string[] = [];
    const flaky = new FailingFirst(new JournalSink(dataDir), 1);
    const sink = new ResilientSink(flaky, (m) => notices.push(m), 0);
    await sink.write({ runId: 'run-a', sessionId: 's', observations: [started, message(1, 'one'), message(2, 'two')] });
    await sink.write({ runId: 'run-a', sessionId: 's', observations: [{ update: 'tap/ended', detail: end }], seal: { result: end } });
    await sink.close();
    expect(flaky.attempts).toBe(3);
    expect(notices).toEqual([]);
    const records = await runRecords(dataDir, 'run-a');
    expect(records.map((r) => (r.kind === 'Observation' ? r.body.update : r.kind))).toEqual(['tap/started', 'message', 'message', 'tap/ended', 'RunSealed']);
    expect(records.at(-1)!.body).toMatchObject({ records: 4 });
  });

  it('journals the neighbours of a record the journal refuses, and counts the refused one as a gap', async () => {
    const dataDir = tempDir();
    const notices: string[] = [];
    const sink = new ResilientSink(new JournalSink(dataDir), (m) => notices.push(m), 0);
    // A lone surrogate has no canonical form: the journal refuses the record, and on its own
    // that refusal fails the whole batch it came in.
    const refused = message(3, '\ud800');
    await sink.write({ runId: 'run-b', sessionId: 's', observations: [started, message(1, 'one'), message(2, 'two'), refused, message(4, 'four')] });
    await sink.write({ runId: 'run-b', sessionId: 's', observations: [{ update: 'tap/ended', detail: end }], seal: { result: end } });
    await sink.close();
    const records = await runRecords(dataDir, 'run-b');
    const kinds = records.map((r) => (r.kind === 'Observation' ? r.body.update : r.kind));
    expect(kinds).toEqual(['tap/started', 'message', 'message', 'message', 'gap', 'tap/ended', 'RunSealed']);
    const wires = records.filter((r) => r.body.update === 'message').map((r) => (r.body.detail as { wire: number }).wire);
    expect(wires).toEqual([1, 2, 4]);
    const gap = records[4]!.body.detail as Record<string, unknown>;
    expect(gap).toMatchObject({ dropped: 1, fromWire: 3, toWire: 3 });
    expect(String(gap.why)).toMatch(/unpaired surrogate/);
    // The seal counts what the run holds, the gap among it: six records before the seal.
    expect(records.at(-1)!.body).toMatchObject({ outcome: 'observed', records: 6 });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/1 observation of run run-b could not be journaled .*recorded? .*gap|records them as a gap/);
  });

  it('says the session goes on unrecorded, once, only when not even the gap can be written', async () => {
    const notices: string[] = [];
    const broken: ObservationSink = {
      write: () => Promise.reject(new Error('disk I/O error')),
      close: () => Promise.resolve(),
    };
    const sink = new ResilientSink(broken, (m) => notices.push(m), 0);
    await sink.write({ runId: 'run-c', sessionId: 's', observations: [started, message(1, 'one')] });
    await sink.write({ runId: 'run-c', sessionId: 's', observations: [message(2, 'two')] });
    await sink.close();
    expect(notices.filter((n) => n.includes('goes on unrecorded'))).toHaveLength(1);
    expect(notices[0]).toContain('disk I/O error');
  });
});

/**
 * The plane as FallbackSink's primary, dying at a chosen write: before its commit, or after it
 * (the whole write, or only its first `part` observations, as when the plane took some of a
 * write's slices) and before its answer reached the tap. What it commits goes into the same
 * data dir's journal, through the fallback's own JournalSink (one journal per process).
 * `acknowledged` is the seq of the last record it answered for: on a fresh data dir, the count.
 */
class DyingPlane {
  acknowledged = 0;
  private committed = 0;
  constructor(
    private readonly journal: JournalSink,
    private readonly fate: Array<'answers' | 'dies-before-commit' | 'dies-after-commit' | { diesAfterCommitting: number }>,
  ) {}
  async write(write: RunWrite): Promise<void> {
    const fate = this.fate.shift() ?? 'answers';
    if (fate === 'dies-before-commit') throw new Error('fetch failed');
    const part = typeof fate === 'object' ? { runId: write.runId, sessionId: write.sessionId, observations: write.observations.slice(0, fate.diesAfterCommitting) } : write;
    await this.journal.write(part);
    this.committed += part.observations.length + (part.seal ? 1 : 0);
    if (fate !== 'answers') throw new Error('socket hang up');
    this.acknowledged = this.committed;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('FallbackSink', () => {
  const ended = { update: 'tap/ended', detail: end };
  const kinds = (records: Awaited<ReturnType<typeof runRecords>>) =>
    records.map((r) => (r.kind === 'Observation' ? (r.body.update === 'message' ? `m${(r.body.detail as { wire: number }).wire}` : String(r.body.update)) : r.kind));

  type Fallback = ConstructorParameters<typeof FallbackSink>[1];

  /** One session through FallbackSink (in `outer`, when given); the direct journal may be wrapped by `direct`. */
  async function session(fate: ConstructorParameters<typeof DyingPlane>[1], options: { direct?: (journal: JournalSink) => Fallback; outer?: (sink: FallbackSink) => ObservationSink } = {}) {
    const dataDir = tempDir();
    const notices: string[] = [];
    const journal = new JournalSink(dataDir);
    const fallback = new FallbackSink(new DyingPlane(journal, fate), options.direct ? options.direct(journal) : journal, (m) => notices.push(m));
    const sink = options.outer ? options.outer(fallback) : fallback;
    await sink.write({ runId: 'run-f', sessionId: 's', observations: [started, message(1, 'one'), message(2, 'two')] });
    await sink.write({ runId: 'run-f', sessionId: 's', observations: [message(3, 'three'), message(4, 'four'), message(5, 'five')] });
    await sink.write({ runId: 'run-f', sessionId: 's', observations: [message(6, 'six')] });
    await sink.write({ runId: 'run-f', sessionId: 's', observations: [ended], seal: { result: end } });
    await sink.close();
    return { records: await runRecords(dataDir, 'run-f'), notices };
  }

  const whole = ['tap/started', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'tap/ended', 'RunSealed'];

  it('writes nothing twice when the plane died after committing a write and before answering it', async () => {
    const { records, notices } = await session(['answers', 'dies-after-commit']);
    expect(kinds(records)).toEqual(whole);
    expect(records.at(-1)!.body).toMatchObject({ outcome: 'observed', records: 8 });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/the plane did not take the observations \(socket hang up\)/);
  });

  it('writes the rest of a write the plane committed only part of', async () => {
    const { records } = await session(['answers', { diesAfterCommitting: 1 }]);
    expect(kinds(records)).toEqual(whole);
  });

  it('writes the whole write when the plane died before committing it, the first write included', async () => {
    expect(kinds((await session(['answers', 'dies-before-commit'])).records)).toEqual(whole);
    expect(kinds((await session(['dies-before-commit'])).records)).toEqual(whole);
    expect(kinds((await session(['dies-after-commit'])).records)).toEqual(whole);
  });

  it('does not seal a run twice when the plane died after committing the seal', async () => {
    const { records } = await session(['answers', 'answers', 'answers', 'dies-after-commit']);
    expect(kinds(records)).toEqual(whole);
    expect(records.at(-1)!.body).toMatchObject({ records: 8 });
  });

  it('writes nothing twice when the journal fails too and ResilientSink writes the doubtful write record by record', async () => {
    let refusals = 2;
    const refuse = () => Promise.reject(new Error('database is locked'));
    const { records } = await session(['answers', { diesAfterCommitting: 2 }], {
      // The direct journal refuses its first two writes (the doubtful write, then its retry),
      // so the doubtful write reaches it one observation at a time.
      direct: (journal) => ({
        write: (write) => (refusals-- > 0 ? refuse() : journal.write(write)),
        writeRest: (write, afterSeq) => (refusals-- > 0 ? refuse() : journal.writeRest(write, afterSeq)),
        close: () => journal.close(),
      }),
      outer: (fallback) => new ResilientSink(fallback, () => undefined, 0),
    });
    expect(refusals).toBeLessThan(0);
    expect(kinds(records)).toEqual(whole);
  });
});
