/**
 * Takeover on a team plane (docs/TEAM-PLANE.md): each instance looks, every `everyMs`, for
 * instances whose lease has ended, claims each one's lease (only one instance can), takes its
 * open runs over (Runtime.adopt: a RunAdopted on each, then each resumed from the journal under
 * the disposition rules) and lets the lease go. A killed instance's lease ends the moment its
 * socket closes, so a run of a killed instance continues elsewhere within `everyMs` and a
 * resume; one gone silent, once the database's keepalives give up on it (postgres-lease.ts).
 *
 * Runs admitted before the journal was shared (copied from a SQLite plane, their host the
 * single plane's `plane`) are nobody's lease: the first look of any instance takes them.
 */
import type { InstanceLease } from '../journal/journal';
import { errorFields, type Logger } from '../base/logger';
import type { Runtime } from '../runtime/runtime';

/** How long runs this instance cannot take (no such agent here) are left before it looks at them again, ms. */
const LEFT_RUNS_LOOK_AGAIN_MS = 60_000;
/** The host a single plane's runs are admitted under (RuntimeOptions.host's default). */
const SINGLE_PLANE_HOST = 'plane';

export interface TakeoverOptions {
  lease: InstanceLease;
  runtime: Runtime;
  logger: Logger;
  everyMs: number;
  /** Told after each takeover, with the runs taken. */
  onTaken?: (from: string, runs: readonly string[]) => void;
}

export interface Takeover {
  /** One look now (what the timer does), resolved when it has ended. */
  look(): Promise<void>;
  stop(): Promise<void>;
}

export function startTakeover(options: TakeoverOptions): Takeover {
  const { lease, runtime, logger } = options;
  let stopped = false;
  let looking: Promise<void> | null = null;
  let firstLook = true;

  /** Hosts whose runs were left (agents this instance does not declare), and when they may be looked at again. */
  const leftUntil = new Map<string, number>();

  const takeOver = async (host: string, why: string) => {
    if ((leftUntil.get(host) ?? 0) > Date.now() || !(await lease.tryClaim(host))) return;
    let done = false;
    try {
      const { adopted, left } = await runtime.adopt(host, why);
      if (adopted.length > 0) options.onTaken?.(host, adopted);
      done = left.length === 0;
      if (left.length > 0) {
        leftUntil.set(host, Date.now() + LEFT_RUNS_LOOK_AGAIN_MS);
        const agents = [...new Set(left.map((r) => r.agent))].join(', ');
        logger.log('warn', `${left.length} open run(s) of ${host} are left for an instance that declares ${agents} (this one does not)`, { host, runs: left.length });
      } else leftUntil.delete(host);
    } finally {
      // Forgotten once nothing of it is left open; otherwise another instance (or its own) may take the rest.
      await lease.release(host, done);
    }
  };

  const lookOnce = async () => {
    await runtime.ready();
    if (stopped) return;
    if (firstLook) {
      firstLook = false;
      await takeOver(SINGLE_PLANE_HOST, 'admitted before the journal was shared by instances');
    }
    for (const instance of await lease.instances()) {
      if (stopped) return;
      if (instance.host === lease.host || instance.alive) continue;
      await takeOver(instance.host, `the lease of ${instance.host} ended (process ${instance.pid} on ${instance.hostname}, serving since ${instance.since})`);
    }
  };

  const look = () => {
    looking ??= lookOnce()
      .catch((error: unknown) => {
        if (!stopped) logger.log('warn', 'looking for instances to take over failed; trying again', errorFields(error));
      })
      .finally(() => {
        looking = null;
      });
    return looking;
  };

  const timer = setInterval(() => void look(), options.everyMs);
  timer.unref();
  void look();
  return {
    look,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await looking;
    },
  };
}
