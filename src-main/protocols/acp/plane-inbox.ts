/**
 * The running plane as the tap's permission inbox (`--policy inbox`). Holding a request needs
 * no call: the request is on the journaled wire, and the plane's fold of the session lists it
 * as open. What the tap must learn is a person's answer, which the plane journals as a
 * `decision` observation (`acp.answer`); the tap asks for new ones (`acp.decisions`) twice a
 * second while it holds an open request, and not at all otherwise. Polling rather than the
 * event stream keeps the tap a plain request/response client that a restarted plane cannot
 * strand; the cost is at most one interval of delay on an answer a person is giving anyway.
 */
import type { PlaneClient } from '../../../src-shared/ipc/client';
import type { HeldPermission, PermissionAnswer, PermissionInbox } from './permission-relay';

export interface DecisionTarget {
  /** The tap's open session runs. */
  sessions(): Array<{ runId: string }>;
  answerPermission(requestKey: string, answer: PermissionAnswer): boolean;
}

export class PlaneInbox implements PermissionInbox {
  private readonly open = new Set<string>();
  private readonly afterSeq = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private target: DecisionTarget | null = null;
  private polling = false;

  constructor(
    private readonly client: PlaneClient,
    private readonly intervalMs = 500,
  ) {}

  attach(target: DecisionTarget): void {
    this.target = target;
  }

  hold(request: HeldPermission): void {
    this.open.add(request.requestKey);
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
    this.timer.unref();
  }

  settled(requestKey: string): void {
    this.open.delete(requestKey);
    if (this.open.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.polling || !this.target) return;
    this.polling = true;
    try {
      for (const { runId } of this.target.sessions()) {
        const result = await this.client.tryCall('acp.decisions', { runId, afterSeq: this.afterSeq.get(runId) ?? 0 });
        // Not yet journaled (the run is still in the tap's queue), or the plane is away: next time.
        if (!result.ok) continue;
        this.afterSeq.set(runId, result.value.lastSeq);
        for (const d of result.value.decisions) {
          const answer: PermissionAnswer = d.outcome === 'selected' && d.optionId !== undefined ? { outcome: 'selected', optionId: d.optionId } : { outcome: 'cancelled' };
          this.target.answerPermission(d.requestKey, answer);
          this.settled(d.requestKey);
        }
      }
    } finally {
      this.polling = false;
    }
  }
}
