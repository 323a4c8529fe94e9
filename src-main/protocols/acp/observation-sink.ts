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
 */
import type { PlaneClient } from '../../../src-shared/ipc/client';
import { Journal } from '../../journal/journal';
import type { RunWrite } from './session-runs';
import { observationDrafts } from './observation-drafts';

export interface ObservationSink {
  /** Appends one run's observations (and its seal, when given) in one commit. */
  write(write: RunWrite): Promise<void>;
  close(): Promise<void>;
}

export class JournalSink implements ObservationSink {
  private journal: Promise<Journal> | null = null;

  constructor(private readonly dataDir: string) {}

  async write(write: RunWrite): Promise<void> {
    this.journal ??= Journal.open({ dataDir: this.dataDir });
    const journal = await this.journal;
    const before = write.seal ? (await journal.store.runSeqs(write.runId)).length : 0;
    await journal.appendBatch(observationDrafts(write, before));
  }

  async close(): Promise<void> {
    if (!this.journal) return;
    const journal = await this.journal.catch(() => null);
    await journal?.close();
  }
}

/** The plane's API takes at most 1 MB a request: observations go in slices well under it. */
const SLICE_CHARS = 256 * 1024;

export class PlaneSink implements ObservationSink {
  constructor(private readonly client: PlaneClient) {}

  async write(write: RunWrite): Promise<void> {
    let slice: RunWrite['observations'] = [];
    let chars = 0;
    for (const observation of write.observations) {
      const size = JSON.stringify(observation).length;
      if (slice.length > 0 && (chars + size > SLICE_CHARS || slice.length >= 500)) {
        await this.send({ runId: write.runId, sessionId: write.sessionId, observations: slice });
        slice = [];
        chars = 0;
      }
      slice.push(observation);
      chars += size;
    }
    await this.send({ ...write, observations: slice });
  }

  private async send(write: RunWrite): Promise<void> {
    if (write.observations.length === 0 && !write.seal) return;
    await this.client.call('acp.record', {
      runId: write.runId,
      sessionId: write.sessionId,
      observations: write.observations,
      ...(write.seal ? { seal: write.seal } : {}),
    });
  }

  async close(): Promise<void> {}
}

/**
 * The plane first; if it cannot be reached (or refuses), the data dir's journal for the rest of
 * the tap's life, said once on stderr. A record the plane may or may not have committed before
 * failing is written again directly: a duplicate observation is visible and harmless, a lost
 * one is not.
 */
export class FallbackSink implements ObservationSink {
  private fallenBack = false;

  constructor(
    private readonly primary: ObservationSink,
    private readonly fallback: ObservationSink,
    private readonly notice: (message: string) => void,
  ) {}

  async write(write: RunWrite): Promise<void> {
    if (!this.fallenBack) {
      try {
        await this.primary.write(write);
        return;
      } catch (error) {
        this.fallenBack = true;
        this.notice(`the plane did not take the observations (${(error as Error).message}); writing to the data dir's journal instead`);
      }
    }
    await this.fallback.write(write);
  }

  async close(): Promise<void> {
    await this.primary.close();
    await this.fallback.close();
  }
}
