/**
 * `io.agentplane/idempotencyKey` in a tools/call's `_meta`: every retry of that call is one run for
 * that caller (docs/GOVERNED-RUNTIME.md, "MCP, being served"). The key is scoped by caller and
 * tool, so another caller's same key, or the same key sent to another tool, is another run. It
 * lives in the surface, not in a server instance: a 2026-07-28 request gets a fresh server each
 * time, and a retry is a new request (or, on 2025-11-25, perhaps a new session).
 *
 * Bounded: the oldest keys are forgotten first, past `capacity`. A key forgotten that way makes
 * its next retry a new run, which is why the bound is generous. A start that failed is
 * forgotten at once, so a retry after a refusal asks again rather than replaying the refusal.
 */
export const IDEMPOTENCY_META_KEY = 'io.agentplane/idempotencyKey';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

export class IdempotencyKeys {
  private readonly runs = new Map<string, Promise<string>>();

  constructor(private readonly capacity = 10_000) {}

  /** The run this key already admitted, or the one `start` admits now (concurrent retries share it). */
  runFor(principal: string, tool: string, key: string, start: () => Promise<string>): Promise<string> {
    const slot = JSON.stringify([principal, tool, key]);
    const known = this.runs.get(slot);
    if (known) return known;
    const started = start();
    this.runs.set(slot, started);
    started.catch(() => {
      if (this.runs.get(slot) === started) this.runs.delete(slot);
    });
    while (this.runs.size > this.capacity) {
      const oldest = this.runs.keys().next().value;
      if (oldest === undefined) break;
      this.runs.delete(oldest);
    }
    return started;
  }

  get size(): number {
    return this.runs.size;
  }
}
