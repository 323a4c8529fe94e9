/**
 * The `a2a.pins.*` commands: the keys remote A2A agents' cards are pinned to, per origin
 * (protocols/a2a/client/a2a-pins.ts). A changed key is refused at the call until a person accepts
 * it here; so these are a person's commands only: a protocol caller (an MCP host, an A2A peer)
 * must not be able to talk the plane into trusting a key. `a2a.remotes` lists the remote agents
 * the runs called (folded from the journal's `a2a` effects), each card's standing from the pins
 * file and its tasks, for the desktop app's Remote agents view; a person's command too.
 */
import type { CommandsOf } from '../../src-shared/ipc/contract';
import type { CommandHandlers } from './dispatch';
import type { CallContext } from './dispatch';
import { PlaneError } from '../base/plane-error';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { isRecord } from '../../src-shared/plain-object';
import { A2aPins, A2aPinsError, type PinView } from '../protocols/a2a/client/a2a-pins';
import type { RunHistory } from '../runtime/run-history';
import { A2A_REMOTES_DEFAULT_RUNS, type A2aRemote, type A2aRemotes, type A2aRemoteTask } from '../../src-shared/protocol/a2a';

type A2aClientCommands = CommandsOf<'a2a'>;

/** What `a2a.remotes` reads: the newest runs, with (at least) their `a2a` effects' attempts in steps, and one record's time by seq. */
export interface A2aRemotesSource {
  listRuns(limit: number): Promise<RunHistory[]>;
  timeOf(seq: number): Promise<string | undefined>;
}

/** At most this many tasks per remote are listed (newest first), and this many remotes. */
const TASKS_PER_REMOTE = 50;
const MAX_REMOTES = 200;


/** A failure names its remote task in its message when one existed (a2a-client.ts: "remote task <id> …"). */
function taskIdInMessage(message: string): string | undefined {
  return /remote task (\S+?)[,;:]?(?:\s|$)/.exec(message)?.[1];
}

/**
 * The remote A2A agents the newest `limit` runs called, folded from their `a2a` effects (the
 * journal is the record; nothing is kept beside it), with each card's standing read from the
 * pins file now: a key accepted since shows as verified, a change seen since as pending.
 */
export async function readA2aRemotes(source: A2aRemotesSource, pins: PinView[], limit = A2A_REMOTES_DEFAULT_RUNS): Promise<A2aRemotes> {
  const runs = await source.listRuns(limit);
  const byCard = new Map<string, { remote: Omit<A2aRemote, 'verification' | 'tasks'>; tasks: Array<A2aRemoteTask & { seq: number }>; sawUnsigned: boolean; newestCardSeq: number }>();
  for (const run of runs) {
    // A task the send accepted is followed by an effect of its own (runtime/a2a-effect.ts: its
    // request `{card, follow: <task id>}`); the task's state is that effect's newest attempt.
    const follows = new Map<string, { done?: unknown; failed?: { error: { code: string; message: string }; disposition: A2aRemoteTask['disposition'] } }>();
    for (const attempts of run.steps.values()) {
      for (const { started, done, failed } of attempts) {
        const request = isRecord(started.request) ? started.request : {};
        if (started.effect === 'a2a' && typeof request.follow === 'string') follows.set(request.follow, { ...(done ? { done } : {}), ...(failed ? { failed } : {}) });
      }
    }
    for (const attempts of run.steps.values()) {
      for (const attempt of attempts) {
        const { started, done, failed } = attempt;
        if (started.effect !== 'a2a') continue;
        const request = isRecord(started.request) ? started.request : {};
        if (typeof request.follow === 'string') continue;
        const card = typeof request.card === 'string' ? request.card : started.destination ?? '?';
        let origin = started.destination ?? card;
        try {
          origin = new URL(card).origin;
        } catch {
          // A card that is not a URL was refused at the call; listed under its text.
        }
        const entry = byCard.get(card) ?? { remote: { card, origin }, tasks: [], sawUnsigned: false, newestCardSeq: -1 };
        byCard.set(card, entry);
        const result = done && isRecord(done.result) ? done.result : null;
        const seen = result && isRecord(result.card) ? result.card : null;
        // The name and description come from the newest card a call recorded.
        if (seen && started.seq > entry.newestCardSeq) {
          entry.newestCardSeq = started.seq;
          entry.remote = { card, origin, ...(typeof seen.name === 'string' ? { name: seen.name } : {}), ...(typeof seen.description === 'string' ? { description: seen.description } : {}) };
          entry.sawUnsigned = seen.verified === false;
        }
        const skill = typeof request.skill === 'string' ? request.skill : undefined;
        const base = { runId: run.runId, step: started.step, agent: run.agent, at: '', seq: started.seq, ...(skill !== undefined ? { skill } : {}) };
        const taskId = result && typeof result.taskId === 'string' ? result.taskId : undefined;
        const follow = result && isRecord(result.following) && taskId !== undefined ? (follows.get(taskId) ?? {}) : null;
        if (follow?.failed) {
          entry.tasks.push({ ...base, state: 'failed', error: { code: follow.failed.error.code, message: follow.failed.error.message }, disposition: follow.failed.disposition, taskId: taskId! });
        } else if (follow && !follow.done) {
          entry.tasks.push({ ...base, state: run.status === 'sealed' ? 'unanswered' : 'in-progress', taskId: taskId! });
        } else if (done) {
          entry.tasks.push({ ...base, state: 'completed', ...(taskId !== undefined ? { taskId } : {}) });
        } else if (failed) {
          const taskId = taskIdInMessage(failed.error.message);
          entry.tasks.push({ ...base, state: 'failed', error: { code: failed.error.code, message: failed.error.message }, disposition: failed.disposition, ...(taskId !== undefined ? { taskId } : {}) });
        } else {
          entry.tasks.push({ ...base, state: run.status === 'sealed' ? 'unanswered' : 'in-progress' });
        }
      }
    }
  }
  const pinOf = new Map(pins.map((pin) => [pin.origin, pin]));
  const remotes = [...byCard.values()]
    .map((entry) => ({ ...entry, newest: Math.max(...entry.tasks.map((t) => t.seq)) }))
    .sort((a, b) => b.newest - a.newest)
    .slice(0, MAX_REMOTES);
  const out: A2aRemote[] = [];
  for (const entry of remotes) {
    const pin = pinOf.get(entry.remote.origin);
    const verification: A2aRemote['verification'] = pin ? (pin.pending ? 'key-changed' : 'verified') : entry.sawUnsigned ? 'unsigned' : 'unknown';
    const tasks = entry.tasks.sort((a, b) => b.seq - a.seq).slice(0, TASKS_PER_REMOTE);
    const listed: A2aRemoteTask[] = [];
    for (const { seq, ...task } of tasks) listed.push({ ...task, at: (await source.timeOf(seq)) ?? '' });
    out.push({ ...entry.remote, verification, ...(pin ? { keyId: pin.keyId } : {}), ...(pin?.pending ? { pendingKeyId: pin.pending.keyId } : {}), tasks: listed });
  }
  return { remotes: out };
}

function personOnly(context: CallContext, what = "see or change the pinned keys of remote A2A agents' cards"): void {
  if (context.caller) throw new PlaneError(ErrorCode.Forbidden, `only a person at this plane can ${what}`);
}

function refusals<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof A2aPinsError) throw new PlaneError(error.message.startsWith('no key') ? ErrorCode.NotFound : ErrorCode.Conflict, error.message);
    throw error;
  }
}

export function a2aClientHandlers(dataDir: string, remotes: A2aRemotesSource): Pick<CommandHandlers, A2aClientCommands> {
  const pins = new A2aPins(dataDir);
  return {
    'a2a.pins.list': (_request, context) => {
      personOnly(context);
      return refusals(() => ({ pins: pins.list() }));
    },
    'a2a.pins.accept': ({ origin }, context) => {
      personOnly(context);
      // The pins are kept per origin; a URL with a path names the same origin.
      return refusals(() => pins.accept(new URL(origin).origin));
    },
    'a2a.remotes': async ({ limit }, context) => {
      // Which remote agents the plane's runs called, and for which runs, is the person's to see.
      personOnly(context, "list the remote A2A agents this plane's runs called");
      const pinned = refusals(() => pins.list());
      return readA2aRemotes(remotes, pinned, limit);
    },
  };
}
