/**
 * A2A push delivery: the worker that POSTs each configured task's events to its receiver
 * (docs/GOVERNED-RUNTIME.md, "A2A, being called": push needs durable registration/cursor storage
 * and a governed transport before the capability is true).
 *
 * Events. For each config whose task has news, the worker reads the task from the journal (the
 * same view GetTask and SubscribeToTask answer from, a2a-task-view.ts taskOf) on every journal
 * commit naming it, and sends, as the spec's StreamResponse: a `statusUpdate` when the task's
 * state (or what it waits for) differs from the last one delivered, and, when it completes, one
 * `artifactUpdate` with the output before the final `statusUpdate`. A state that lasted less than
 * one read may be coalesced, exactly as on a subscription.
 *
 * Exactly once, as delivered here, is at-least-once plus an idempotent id: every POST carries
 * `X-AgentPlane-Event-Id: <taskId>:<journal seq>:<status|artifact>`, the same id on every retry
 * and after a restart; the cursor (push-store.ts) is advanced durably after the receiver's 2xx. The
 * one duplicate possible, a crash between a 2xx and the cursor write, repeats an id the receiver
 * has seen and can drop. A restart loses nothing: the new plane's worker starts from each
 * config's cursor and sends what the journal holds past it.
 *
 * Closing lets a POST already on its way finish, for at most CLOSE_GRACE_MS, and records its
 * cursor: the receiver may already hold the event, and a close that aborted it left the cursor
 * behind, so every ordinary restart sent that event again (a2a-push.test.ts). Nothing new starts
 * once closing: no retry, no queued delivery, no second POST of the same delivery.
 *
 * Transport: guardedRequest through the plane's netguard (connect-time address judgement, no
 * redirects followed, answer capped, a whole-request deadline), the config's token in
 * `X-A2A-Notification-Token` (the header the SDK's receiver reads) and its authentication as
 * `Authorization: <scheme> <credentials>`. A failed POST is retried with backoff, a bounded
 * number of times; then the config waits for the task's next journal commit or a restart. Tokens
 * and credentials never reach the log: only the task, the config id and the failure's message.
 */
import type { CommandResponse, RunView } from '../../../src-shared/ipc/contract';
import { labelsHeld, type HeldLabel } from '../../../src-shared/vocabulary/sensitivity';
import type { Logger } from '../../base/logger';
import { guardedRequest, type Netguard } from '../../net/netguard';
import type { A2aPlaneDoor } from './a2a-server';
import { artifactOf, contextOf, isTerminalState, taskOf, taskStateOf } from './a2a-task-view';
import type { PushStore, StoredPushConfig } from './push-store';

export const PUSH_EVENT_ID_HEADER = 'X-AgentPlane-Event-Id';
const DEADLINE_MS = 10_000;
const MAX_ATTEMPTS = 6;
const FIRST_BACKOFF_MS = 250;
/** How long a close waits for POSTs in flight before it aborts them. */
const CLOSE_GRACE_MS = 2_000;
/** Records read a page while a task's sensitivity labels are gathered (the journal.records cap). */
const RECORDS_PER_READ = 5000;

export interface PushWorkerOptions {
  store: PushStore;
  door: A2aPlaneDoor;
  netguard: Netguard;
  logger: Logger;
  /** Tests shorten the backoff. */
  firstBackoffMs?: number;
}

export interface PushWorker {
  /** Looks at a task now (a config was just set). */
  poke(taskId: string): void;
  /** Why the task, as its records stand now, may not be pushed to `url` (a value above the receiver's sensitivity ceiling), or null. */
  ceilingProblem(taskId: string, principal: string, url: string): Promise<string | null>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

export function startPushWorker(options: PushWorkerOptions): PushWorker {
  const { store, door, netguard, logger } = options;
  const firstBackoff = options.firstBackoffMs ?? FIRST_BACKOFF_MS;
  const chains = new Map<string, Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  const aborter = new AbortController();
  let closed = false;

  /** Per task: the labels its records hold, read up to `readTo` (each delivery reads only what is new). */
  const held = new Map<string, { readTo: number; labels: HeldLabel[] }>();

  async function labelsOf(taskId: string, principal: string): Promise<HeldLabel[]> {
    const known = held.get(taskId) ?? { readTo: 0, labels: [] };
    held.set(taskId, known);
    for (;;) {
      const answer = await door.dispatch('journal.records', { runId: taskId, fromSeq: known.readTo + 1, limit: RECORDS_PER_READ }, { principal });
      if (!answer.ok) throw new Error(`the task's records could not be read: ${answer.error.message}`);
      const page = answer.value as CommandResponse<'journal.records'>;
      known.labels.push(...labelsHeld(page.records));
      const last = page.records.at(-1);
      if (last) known.readTo = last.seq;
      if (page.nextSeq === null || !last) return known.labels;
    }
  }

  /**
   * The receiver's ceiling (docs/GOVERNED-RUNTIME.md, "Sensitivity"): a push sends the task's
   * states and output, made from every value the run holds, so a run holding one above the
   * ceiling of `push:<origin>` sends the receiver nothing at all, like a run resource to an MCP
   * caller above its ceiling.
   */
  async function ceilingProblem(taskId: string, principal: string, url: string): Promise<string | null> {
    if (!door.sensitivity) return null;
    const destination = pushDestination(url);
    const above = door.sensitivity.firstAbove(await labelsOf(taskId, principal), destination);
    return above ? `task ${taskId} holds a ${above.label} value (${above.at}), above ${destination}'s sensitivity ceiling ${above.ceiling}; nothing of it is pushed there` : null;
  }

  const keyOf = (run: RunView) => `${taskStateOf(run)}|${run.status === 'suspended' ? (run.pending?.waitId ?? '') : ''}`;

  async function readRun(config: StoredPushConfig): Promise<RunView | null> {
    const answer = await door.dispatch('runs.get', { runId: config.taskId }, { principal: config.owner });
    return answer.ok ? (answer.value as RunView) : null;
  }

  async function post(config: StoredPushConfig, eventId: string, body: Json): Promise<void> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', [PUSH_EVENT_ID_HEADER]: eventId };
    if (config.token) headers['X-A2A-Notification-Token'] = config.token;
    if (config.authentication) headers.Authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;
    const answer = await guardedRequest(netguard, config.url, { method: 'POST', headers, body: JSON.stringify(body), deadlineMs: DEADLINE_MS, maxBytes: 64 * 1024, signal: aborter.signal });
    if (answer.status < 200 || answer.status >= 300) throw new Error(`the receiver answered HTTP ${answer.status}`);
  }

  /** Sends what the journal holds past the config's cursor; advances the cursor after each 2xx. */
  async function deliver(config: StoredPushConfig): Promise<void> {
    const run = await readRun(config);
    if (!run) return;
    const withheld = await ceilingProblem(config.taskId, config.owner, config.url);
    if (withheld) {
      // Refused before anything is sent, for good: the run's labels only ever grow.
      logger.log('warn', 'a2a push: withheld', { taskId: config.taskId, config: config.id, reason: withheld });
      store.advance(config.taskId, config.id, { ...config.cursor, done: true });
      held.delete(config.taskId);
      return;
    }
    const cursor = { ...config.cursor };
    const state = taskStateOf(run);
    const key = keyOf(run);
    const artifact = artifactOf(run);
    if (artifact && !cursor.artifactSent) {
      await post(config, `${run.runId}:${run.lastSeq}:artifact`, { artifactUpdate: { taskId: run.runId, contextId: contextOf(run), artifact, lastChunk: true } });
      cursor.artifactSent = true;
      store.advance(config.taskId, config.id, cursor);
      // Closing: the status goes out at the next start, from this cursor.
      if (closed) return;
    }
    if (key !== cursor.sentKey) {
      const status = (taskOf(run, door.approveWith) as { status: Json }).status;
      await post(config, `${run.runId}:${run.lastSeq}:status`, { statusUpdate: { taskId: run.runId, contextId: contextOf(run), status } });
      cursor.sentKey = key;
      cursor.seq = run.lastSeq;
    }
    cursor.done = isTerminalState(state);
    store.advance(config.taskId, config.id, cursor);
    if (cursor.done) held.delete(config.taskId);
  }

  function schedule(taskId: string, id: string, attempt: number): void {
    if (closed) return;
    const previous = chains.get(`${taskId}/${id}`) ?? Promise.resolve();
    const next = previous.then(async () => {
      const config = store.get(taskId, id);
      if (closed || !config || config.cursor.done) return;
      try {
        await deliver(config);
      } catch (error) {
        if (closed) return;
        logger.log('warn', 'a2a push: delivery failed', { taskId, config: id, attempt, message: (error as Error).message });
        if (attempt + 1 >= MAX_ATTEMPTS) return;
        const timer = setTimeout(() => {
          timers.delete(timer);
          schedule(taskId, id, attempt + 1);
        }, firstBackoff * 2 ** attempt);
        timers.add(timer);
      }
    });
    const name = `${taskId}/${id}`;
    chains.set(name, next);
    // Forgotten once settled (unless a newer delivery chained on), so the map holds only work in flight.
    void next.then(() => {
      if (chains.get(name) === next) chains.delete(name);
    });
  }

  const poke = (taskId: string) => {
    for (const config of store.forTask(taskId)) schedule(taskId, config.id, 0);
  };

  const unsubscribe = door.onJournal((runs) => {
    for (const runId of new Set(runs.map((r) => r.runId))) poke(runId);
  });
  // After a restart: every config with events still to deliver starts from its cursor.
  for (const config of store.pending()) schedule(config.taskId, config.id, 0);

  return {
    poke,
    ceilingProblem,
    async close() {
      closed = true;
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      const grace = setTimeout(() => aborter.abort(), CLOSE_GRACE_MS);
      await Promise.allSettled([...chains.values()]);
      clearTimeout(grace);
      aborter.abort();
    },
  };
}

/** The destination a push receiver's sensitivity ceiling is configured under: `push:<origin>` (`push:https://hooks.example`, or a pattern `push:*`). */
export function pushDestination(url: string): string {
  return `push:${new URL(url).origin}`;
}

/**
 * Why `text` may not be a push receiver, or null. The grant rule: a receiver's exact origin
 * (`scheme://host:port`) must be on the plane's outbound allow list (`agentplane net allow
 * <origin>` or Settings), which a person adds, never a caller. A push sends the task's states
 * and output to an address a caller names, so the operator's grant of that host is the primary
 * control, https or not (docs/SECURITY.md); netguard then judges the address at every connect
 * like every outbound call, and its pre-flight refuses an IP literal it would refuse at
 * connect, so such a config is refused when set, not at its first event.
 */
export function refusePushTarget(netguard: Netguard, text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not an absolute URL';
  }
  if (url.username || url.password) return 'a push URL carries no user name or password; send them as authentication';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${url.protocol} is not https`;
  if (!netguard.allow.allows(url.origin)) {
    return `${url.origin} is not a granted push receiver: its exact origin is not on the outbound allow list (a person grants it with: agentplane net allow ${url.origin})`;
  }
  const refused = netguard.preflight(url.href);
  return refused ? refused.message : null;
}
