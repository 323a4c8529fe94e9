/**
 * The whole-request deadline every MCP request carries, lazy connect included: the SDK
 * transport itself would wait for ever, and a wedged server would hang a step with nothing
 * journaled.
 */
import { undici } from '../../../net/undici';

/** The whole-request deadline: a timer and the signal it aborts. */
export class Deadline {
  readonly controller = new AbortController();
  private readonly endsAt: number;
  private readonly timer: NodeJS.Timeout;
  constructor(readonly ms: number) {
    // undici is loaded first (net/undici.ts: on the first request): loading it is the plane's
    // own cost, and must not eat into the time the far side is given.
    undici();
    this.endsAt = Date.now() + ms;
    this.timer = setTimeout(() => this.controller.abort(new DeadlinePassed(ms)), ms);
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get passed(): boolean {
    return this.controller.signal.aborted || Date.now() >= this.endsAt;
  }
  remaining(): number {
    return Math.max(1, this.endsAt - Date.now());
  }
  /** `work`, or a DeadlinePassed rejection when the deadline fires first (whatever the SDK does). */
  async race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    if (this.signal.aborted) throw new DeadlinePassed(this.ms);
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new DeadlinePassed(this.ms));
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, aborted]);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
  }
  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** The deadline fired before the work settled. */
export class DeadlinePassed extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}
