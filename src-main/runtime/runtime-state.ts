/**
 * What the runtime's rooms share: its options, the agents and programs it runs, the runs it
 * hosts and executes, the halts in force, and whether it may act at all (a journal that did
 * not verify, a close under way). Runtime (runtime.ts) makes one and hands it to each room
 * (runtime-admission.ts, runtime-execution.ts, runtime-reads.ts, runtime-decisions.ts); no
 * room holds another's state.
 */
import { ErrorCode, ErrorReason } from '../../src-shared/ipc/errors';
import type { Journal } from '../journal/journal';
import { PlaneError } from '../base/plane-error';
import type { Logger } from '../base/logger';
import type { ModelProvider } from './model-provider';
import type { BrokenAgent, LoadedAgent } from './manifest';
import type { PolicyEngine } from './policy';
import type { RunProgram } from './run-program';
import type { PeerCaller } from './peer-effect';
import type { McpToolCaller } from './mcp-effect';
import type { A2aCaller } from './a2a-effect';
import type { Tool, ToolContext } from './tools';
import type { ModelTextSink } from './model-stream';
import { Sensitivity } from '../../src-shared/vocabulary/sensitivity';

export interface RuntimeOptions {
  journal: Journal;
  agents: readonly LoadedAgent[];
  /**
   * Agent files that did not load (the person's own, <data dir>/agents): not runnable, listed
   * with their problem, and a run of one is refused with it rather than as "no agent named".
   */
  brokenAgents?: readonly BrokenAgent[];
  policy: PolicyEngine;
  providers: ReadonlyMap<string, ModelProvider>;
  tools: ReadonlyMap<string, Tool>;
  toolContext: ToolContext;
  logger: Logger;
  /** How agent runs reach local peers (the plane's supervisor and registry). */
  peers?: PeerCaller;
  /** How agent runs reach the MCP servers the user declared (the plane's client pool). */
  mcp?: McpToolCaller;
  /** How agent runs reach remote A2A agents (the plane's A2A client, through netguard). */
  a2a?: A2aCaller;
  /** Programs beyond the agents (a peer's skills). */
  programs?: readonly RunProgram[];
  /**
   * Which process executes the runs this runtime admits: `plane`, or `peer:<id>` for a peer
   * process sharing the data dir. A runtime resumes only its own runs; others it can list and
   * decide, and their host picks the decision up from the journal.
   */
  host?: string;
  /** The operator's sensitivity labels and egress ceilings (docs/GOVERNED-RUNTIME.md, "Sensitivity"); default: none configured. */
  sensitivity?: Sensitivity;
  /** How often to read records other processes appended (decisions, cancels, halts), ms. */
  followMs?: number;
  /** The most records the folded-history cache holds in all (default HISTORY_CACHE_RECORDS). */
  historyCacheRecords?: number;
  /**
   * Resolve `create` before the start-up check of the journal ends (the long-running plane:
   * `serve`, the desktop app). The check still gates everything it gated: each start,
   * decision, answer, cancel and halt waits for it, and a journal that does not verify is
   * refused as before; reads of the journal answer meanwhile. On a journal of 1M records the
   * check takes seconds (all of it verified, in workers), which otherwise all came before
   * the plane's first answer.
   */
  checkJournalInBackground?: boolean;
  /**
   * With checkJournalInBackground: once the start-up check has ended, the summaries of this many
   * newest runs are folded and kept in the background (RunReads.listRunSummaries), so the first
   * look at the Runs list answers from them. On a journal of 10M records the newest 1,000 runs
   * held a run of 1,000,000 records, whose first fold took 7-8 s; the first Runs view waited for
   * it (docs/PERFORMANCE.md, "At scale"). A look meanwhile joins the fold under way.
   */
  warmRunSummaries?: number;
  /**
   * Live, coalesced views of performed model calls' answers while they stream (the plane
   * publishes them as `runs.streaming`). Advisory and never journaled: the sealed effect is
   * the record (model-stream.ts).
   */
  onModelText?: ModelTextSink;
}

export class RuntimeState {
  readonly journal: Journal;
  readonly logger: Logger;
  readonly host: string;
  readonly sensitivity: Sensitivity;
  agents: ReadonlyMap<string, LoadedAgent>;
  /** Agent files that did not load, by the name each is listed under (the first of a name). */
  brokenAgents: Map<string, BrokenAgent>;
  readonly programs = new Map<string, RunProgram>();
  /** Runs this runtime hosts (admitted here, or by an earlier process of the same host). */
  readonly ownRuns = new Set<string>();
  readonly executing = new Map<string, Promise<void>>();
  readonly cancelRequests = new Set<string>();
  readonly halts = new Set<string>();
  readonly settleWaiters = new Map<string, Array<() => void>>();
  brokenJournal: string | null = null;
  /** The start-up check of the journal (see checkJournalInBackground); never rejects. */
  startedUp: Promise<void> = Promise.resolve();
  closing = false;

  constructor(readonly options: RuntimeOptions) {
    this.journal = options.journal;
    this.logger = options.logger;
    this.host = options.host ?? 'plane';
    this.sensitivity = options.sensitivity ?? Sensitivity.defaults();
    this.agents = new Map(options.agents.map((a) => [a.manifest.name, a]));
    this.brokenAgents = brokenByName(options.brokenAgents ?? []);
  }

  /** Waits for the start-up check, then refuses if the journal is broken or the runtime closing. */
  async usable(): Promise<void> {
    await this.startedUp;
    this.assertUsable();
  }

  assertUsable(): void {
    if (this.brokenJournal) throw new PlaneError(ErrorCode.Unavailable, `refused: ${this.brokenJournal}; no run is started, resumed or decided until it does`);
    if (this.closing) throw new PlaneError(ErrorCode.Unavailable, 'the plane is shutting down', ErrorReason.Draining);
  }

  /** The halts in force; complete once the start-up check has ended (ready()). */
  haltScopes(): string[] {
    return [...this.halts].sort();
  }

  haltedByChain(chain: readonly string[], agent: string): string | null {
    for (const scope of this.halts) {
      if (scope === `agent:${agent}`) return scope;
      if (scope.startsWith('subject:') && chain.includes(scope.slice('subject:'.length))) return scope;
    }
    return null;
  }
}

/** Broken agent files by the name each is listed under; of two under one name, the first. */
export function brokenByName(broken: readonly BrokenAgent[]): Map<string, BrokenAgent> {
  const byName = new Map<string, BrokenAgent>();
  for (const entry of broken) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  return byName;
}
