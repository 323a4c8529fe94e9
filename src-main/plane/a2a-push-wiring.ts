/**
 * A2A push notifications wired for one A2A listener: the durable store, the delivery worker, the
 * receiver rule and the poke, as a2a-server.ts's `push` option takes them, and the close that
 * stops the worker. The plane's endpoint (a2a-endpoint.ts) and every peer's port (peer-a2a.ts)
 * wire push through this one function, so the two cannot drift apart: push is advertised
 * exactly when its durable worker is wired (docs/GOVERNED-RUNTIME.md), on either surface.
 *
 * One store per process, never one file for two: the plane keeps `<dataDir>/a2a-push.json`, a
 * peer (its own process, beside the plane and other peers on the same data dir) keeps
 * `<dataDir>/peers/<id>/a2a-push.json`. PushStore holds its configs in memory and replaces the
 * file whole on every change, so two processes writing one file would each overwrite the other's
 * configs and cursors — exactly the loss the cursor exists to prevent.
 *
 * Every POST leaves through the netguard given here (the process's own, honouring the data dir's
 * outbound allow list): a receiver on loopback needs its exact origin on that list, on a peer as
 * on the plane.
 */
import type { Logger } from '../base/logger';
import type { Netguard } from '../net/netguard';
import type { A2aPlaneDoor, A2aPushOptions } from '../protocols/a2a/a2a-server';
import { refusePushTarget, startPushWorker } from '../protocols/a2a/a2a-push';
import { PushStore } from '../protocols/a2a/push-store';

export interface A2aPushWiringOptions {
  /** The folder holding this listener's `a2a-push.json`: the data dir (plane) or the peer's own folder. */
  dir: string;
  /** The door the A2A handler serves: the worker reads tasks and follows journal commits through it. */
  door: A2aPlaneDoor;
  netguard: Netguard;
  logger: Logger;
}

export interface A2aPushWiring {
  /** What a2a-server.ts's `push` option takes. */
  push: A2aPushOptions;
  /** Stops the worker: no timer, socket or journal listener is left once it settles. */
  close(): Promise<void>;
}

/**
 * Opens the store (a broken file throws, naming it: an empty read would forget every cursor) and
 * starts the worker, which resumes every pending config from its durable cursor at once.
 */
export function startA2aPush(options: A2aPushWiringOptions): A2aPushWiring {
  const { netguard } = options;
  const store = new PushStore(options.dir);
  const worker = startPushWorker({ store, door: options.door, netguard, logger: options.logger });
  return {
    push: { store, refuseTarget: (url) => refusePushTarget(netguard, url), poke: (taskId) => worker.poke(taskId), refuseFor: (taskId, principal, url) => worker.ceilingProblem(taskId, principal, url) },
    close: () => worker.close(),
  };
}
