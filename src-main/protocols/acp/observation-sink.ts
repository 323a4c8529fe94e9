/**
 * Where the tap's observations go. Two doors, one shape: the running plane's local API
 * (`acp.record`, so the plane validates, appends and announces the records like any of its
 * own), or, when no plane runs for the data dir, the data dir's journal opened directly as a
 * peer process opens it (never as a plane: no plane.lock, so a plane can start beside the tap
 * at any time; the journal itself is safe for several writing processes).
 *
 * Sealing: a run's RunSealed counts every record the run wrote before it, so whoever seals
 * must count what is in the journal, not what this tap sent (the plane may have written
 * decision records into the run). The plane counts inside acp.record; the journal sink counts
 * the run's records before appending the seal.
 *
 * A write's transcript lines (presentation the journal leaves out, session-runs.ts) go to the
 * transcript store beside the journal, before its records: a view read at any journal seq then
 * has every line the records before it named. A line written twice is kept once.
 */
import type { PlaneClient } from '../../../src-shared/ipc/client';
import { canonicalize } from '../../../src-shared/journal/canonical-json';
import { Journal } from '../../journal/journal';
import { TranscriptStore } from '../../journal/transcript-store';
import { chooseDatabase, databaseOptions } from '../../journal/postgres-url';
import type { ObservationDraft, RunWrite } from './session-runs';
import { observationDrafts } from './observation-drafts';

export interface ObservationSink {
  /** Appends one run's observations (and its seal, when given) in one commit. */
  write(write: RunWrite): Promise<void>;
  close(): Promise<void>;
}

export class JournalSink implements ObservationSink {
  private journal: Promise<Journal> | null = null;
  private transcripts: TranscriptStore | null = null;

  constructor(private readonly dataDir: string) {}

  async write(write: RunWrite): Promise<void> {
    if (write.transcript && write.transcript.length > 0) {
      this.transcripts ??= TranscriptStore.open(this.dataDir);
      this.transcripts.append(write.runId, write.sessionId, write.transcript);
    }
    if (write.observations.length === 0 && !write.seal) return;
    this.journal ??= Journal.open({ dataDir: this.dataDir, ...databaseOptions(chooseDatabase(undefined, process.env)) });
    const journal = await this.journal;
    const before = write.seal ? await journal.runRecordCount(write.runId) : 0;
    await journal.appendBatch(observationDrafts(write, before));
  }

  /**
   * A write another door may have committed, whole or in part, before it failed (the plane
   * killed after its commit and before its answer reached the tap): what the run already holds
   * above `afterSeq` (everything the other door acknowledged is at or below it) is not written
   * again, nor the seal of a run already sealed. The rest is written as write() would.
   */
  async writeRest(write: RunWrite, afterSeq: number): Promise<void> {
    this.journal ??= Journal.open({ dataDir: this.dataDir, ...databaseOptions(chooseDatabase(undefined, process.env)) });
    const journal = await this.journal;
    const held = new Set<string>();
    let sealed = false;
    for (const record of await journal.readRun(write.runId, afterSeq + 1, Number.MAX_SAFE_INTEGER)) {
      if (record.kind === 'RunSealed') sealed = true;
      else if (record.kind === 'Observation') {
        const key = observationKey(record.body as { update: unknown; detail: unknown });
        if (key !== null) held.add(key);
      }
    }
    const observations = write.observations.filter((o) => {
      const key = observationKey(o);
      return key === null || !held.has(key);
    });
    const seal = write.seal && !sealed ? write.seal : undefined;
    // Transcript lines are kept once whoever wrote them first: always written again.
    await this.write({ runId: write.runId, sessionId: write.sessionId, observations, ...(write.transcript ? { transcript: write.transcript } : {}), ...(seal ? { seal } : {}) });
  }

  async close(): Promise<void> {
    this.transcripts?.close();
    if (!this.journal) return;
    const journal = await this.journal.catch(() => null);
    await journal?.close();
  }
}

/** The plane's API takes at most 1 MB a request: observations go in slices well under it. */
const SLICE_CHARS = 256 * 1024;

export class PlaneSink implements ObservationSink {
  /** The highest journal seq the plane has answered for: what it committed of a write whose answer never came is above it. */
  acknowledged = 0;

  constructor(private readonly client: PlaneClient) {}

  async write(write: RunWrite): Promise<void> {
    // Transcript lines first (so the records after them find them), in slices of their own but the last.
    let lines = write.transcript ?? [];
    while (lines.length > 500) {
      await this.send({ runId: write.runId, sessionId: write.sessionId, observations: [], transcript: lines.slice(0, 500) });
      lines = lines.slice(500);
    }
    write = { ...write, transcript: lines };
    let slice: RunWrite['observations'] = [];
    let chars = 0;
    for (const observation of write.observations) {
      const size = JSON.stringify(observation).length;
      if (slice.length > 0 && (chars + size > SLICE_CHARS || slice.length >= 500)) {
        await this.send({ runId: write.runId, sessionId: write.sessionId, observations: slice, ...(write.transcript?.length ? { transcript: write.transcript } : {}) });
        write = { ...write, transcript: [] };
        slice = [];
        chars = 0;
      }
      slice.push(observation);
      chars += size;
    }
    await this.send({ ...write, observations: slice });
  }

  private async send(write: RunWrite): Promise<void> {
    if (write.observations.length === 0 && !write.seal && !write.transcript?.length) return;
    const { seq } = await this.client.call('acp.record', {
      runId: write.runId,
      sessionId: write.sessionId,
      observations: write.observations,
      ...(write.transcript?.length ? { transcript: write.transcript } : {}),
      ...(write.seal ? { seal: write.seal } : {}),
    });
    this.acknowledged = Math.max(this.acknowledged, seq);
  }

  async close(): Promise<void> {}
}

/**
 * The plane first; if it cannot be reached (or refuses), the data dir's journal for the rest of
 * the tap's life, said once on stderr.
 *
 * The write the plane failed on is in doubt: the plane may have committed it (or some of its
 * slices) and died before its answer arrived. Rewritten blindly it would be journaled twice (a
 * second tap/started and every message again, the seal counting them all), so it goes through
 * the journal's writeRest: whatever the run holds above the last seq the plane acknowledged is
 * not written again. Writes after it, which the plane never saw, are written as they come. Each
 * observation is unique within its run (its wire number; tap/started and tap/ended are one
 * each; a gap names its range and time), so "already held" is an equal record in the run.
 */
export class FallbackSink implements ObservationSink {
  private fallenBack = false;
  /** Keys of the observations (and `seal:<runId>`) of the write the plane failed on, not yet written here; and the seq above which to look for them. */
  private doubt: { afterSeq: number; keys: Set<string> } | null = null;

  constructor(
    private readonly primary: ObservationSink & { readonly acknowledged: number },
    private readonly fallback: ObservationSink & { writeRest(write: RunWrite, afterSeq: number): Promise<void> },
    private readonly notice: (message: string) => void,
  ) {}

  async write(write: RunWrite): Promise<void> {
    if (!this.fallenBack) {
      try {
        await this.primary.write(write);
        return;
      } catch (error) {
        this.fallenBack = true;
        const keys = new Set(doubtKeys(write));
        this.doubt = keys.size > 0 ? { afterSeq: this.primary.acknowledged, keys } : null;
        this.notice(`the plane did not take the observations (${(error as Error).message}); writing to the data dir's journal instead`);
      }
    }
    const doubt = this.doubt;
    const keys = doubt ? doubtKeys(write).filter((key) => doubt.keys.has(key)) : [];
    if (!doubt || keys.length === 0) {
      await this.fallback.write(write);
      return;
    }
    // Also when ResilientSink retries it, or writes it record by record: until each of its
    // observations is written here, any of them may be in the run already.
    await this.fallback.writeRest(write, doubt.afterSeq);
    for (const key of keys) doubt.keys.delete(key);
    if (doubt.keys.size === 0) this.doubt = null;
  }

  async close(): Promise<void> {
    await this.primary.close();
    await this.fallback.close();
  }
}

/** An observation as the journal holds it, canonical: equal records, equal keys. Null for one the journal cannot hold. */
function observationKey(observation: { update: unknown; detail: unknown }): string | null {
  try {
    // Through JSON first, as the plane receives it: an undefined member is not there.
    return canonicalize(JSON.parse(JSON.stringify({ update: observation.update, detail: observation.detail ?? null })));
  } catch {
    return null;
  }
}

function doubtKeys(write: RunWrite): string[] {
  const keys = write.observations.map(observationKey).filter((key): key is string => key !== null);
  return write.seal ? [...keys, `seal:${write.runId}`] : keys;
}

/** After this many lines about lost observations, further losses are only recorded as gaps. */
const LOSS_NOTICES = 10;

/**
 * A write that fails is never the end of what it carried. A batch is one commit, and one record
 * the journal refuses (or one failed commit) fails every record in it, so a failed write is:
 * 1. tried again whole, once, after a moment (a busy database or a plane restarting);
 * 2. if that fails too, written one observation at a time, so a bad record fails alone and the
 *    ones around it are journaled;
 * 3. whatever still could not be written is counted in a `gap` observation of the run (how
 *    many, their wire range, why), and the tap says so on stderr. The run's seal counts the
 *    records the run really holds, so a session that lost records reads as having lost them,
 *    never as a short, complete-looking run.
 * Recoveries run one at a time: a group commit fails every batch in it, and retrying them all
 * in the same turn would group them, and fail them, together again.
 * Only when even the gap cannot be written is the session said to go on unrecorded.
 */
export class ResilientSink implements ObservationSink {
  private recovering: Promise<void> = Promise.resolve();
  private notices = 0;
  private unrecorded = false;

  constructor(
    private readonly sink: ObservationSink,
    private readonly notice: (message: string) => void,
    private readonly retryAfterMs = 50,
  ) {}

  async write(write: RunWrite): Promise<void> {
    try {
      await this.sink.write(write);
      return;
    } catch {
      // Recovered below, one recovery at a time.
    }
    const recovery = this.recovering.then(() => this.recover(write));
    this.recovering = recovery.catch(() => undefined);
    await recovery;
  }

  async close(): Promise<void> {
    await this.recovering;
    await this.sink.close();
  }

  private async recover(write: RunWrite): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.retryAfterMs));
    try {
      await this.sink.write(write);
      return;
    } catch {
      // One at a time, below.
    }
    const one = (observations: ObservationDraft[], seal?: RunWrite['seal']): Promise<void> =>
      this.sink.write({ runId: write.runId, sessionId: write.sessionId, observations, ...(seal ? { seal } : {}) });
    if (write.transcript?.length) {
      // Not evidence: a transcript that cannot be written is said, and the records go on.
      await this.sink.write({ runId: write.runId, sessionId: write.sessionId, observations: [], transcript: write.transcript }).catch((error: unknown) => this.say(`${write.transcript!.length} transcript line(s) of run ${write.runId} could not be kept (${(error as Error).message})`));
    }
    let lost = 0;
    let fromWire = Number.POSITIVE_INFINITY;
    let toWire = Number.NEGATIVE_INFINITY;
    let why = '';
    for (const observation of write.observations) {
      try {
        await one([observation]);
      } catch (error) {
        lost += 1;
        why ||= (error as Error).message;
        for (const wire of wiresOf(observation)) {
          fromWire = Math.min(fromWire, wire);
          toWire = Math.max(toWire, wire);
        }
      }
    }
    if (lost > 0) {
      const range = Number.isFinite(fromWire) ? { fromWire, toWire } : { fromWire: 0, toWire: 0 };
      const gap: ObservationDraft = { update: 'gap', detail: { dropped: lost, ...range, at: new Date().toISOString(), why: `the journal did not take them: ${why}`.slice(0, 500) } };
      try {
        await one([gap]);
        this.say(`${lost} observation${lost === 1 ? '' : 's'} of run ${write.runId} could not be journaled (${why}); the run records them as a gap`);
      } catch (error) {
        this.sayUnrecorded((error as Error).message);
      }
    }
    if (write.seal) {
      try {
        await one([], write.seal);
      } catch (error) {
        this.say(`run ${write.runId} could not be sealed (${(error as Error).message})`);
      }
    }
  }

  private say(message: string): void {
    this.notices += 1;
    if (this.notices <= LOSS_NOTICES) this.notice(message);
    if (this.notices === LOSS_NOTICES) this.notice('further observations that cannot be journaled are recorded as gaps without a line here');
  }

  private sayUnrecorded(why: string): void {
    if (this.unrecorded) return;
    this.unrecorded = true;
    this.notice(`observations could not be journaled (${why}); the session goes on unrecorded`);
  }
}

/** The wire numbers an observation stands for: a message's or malformed line's own, a gap's range. */
function wiresOf(observation: ObservationDraft): number[] {
  const detail = observation.detail as Record<string, unknown> | null;
  if (typeof detail !== 'object' || detail === null) return [];
  return [detail.wire, detail.fromWire, detail.toWire].filter((w): w is number => typeof w === 'number');
}
