/**
 * The live 2025-11-25 sessions of one MCP route: which principal owns each, how many each
 * principal holds, and which request ids each has used.
 *
 * A session belongs to the principal whose `initialize` created it. Another principal naming
 * its id is answered exactly like an unknown id (404), so a session id learned from a log or a
 * shoulder is not even confirmed to exist. A principal holds at most `maxPerPrincipal` live
 * sessions: sessions cost a server instance, a transport and an event store each, and a host
 * that opens one per request without closing them would otherwise grow the plane without limit.
 *
 * A host that never closes its sessions (no HTTP DELETE) must not lock itself out at the cap, so a
 * principal at the cap makes room by closing its own least recently active idle session. Idle
 * means no request of the session is being answered (`openRequests` is 0: no POST whose response,
 * plain or a stream, has not ended). A standalone GET stream does not make a session busy: it is
 * only where notifications would go, and a host that never closes its sessions typically leaves
 * one open on each, so counting it would make every such session busy forever and lock the host
 * out exactly as before. Closing an idle session ends that stream with it; the host learns on its
 * next request there (404, as for any unknown session) and initializes again, as the 2025-11-25
 * transport says it must. When every one of the principal's sessions is answering a request, the
 * cap holds and the next initialize is refused.
 *
 * Request ids: the 2025-11-25 base protocol says a request id MUST NOT have been used before by
 * the requestor in the same session. A repeat is therefore a malformed request, and the route
 * refuses it (-32600) before it reaches a tool, so a host that retries a `tools/call` with the
 * same id never runs the tool twice. Ids are remembered for the last `maxRememberedIds`
 * requests of a session, which bounds memory for a session that lives for days.
 */
import { createHash } from 'node:crypto';
import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { McpServer, Server } from '@modelcontextprotocol/server';

/**
 * How a session is named in the log: a digest of its id, never the id. The id is a header value
 * the client sends with every request; the log needs only to tell one session from another and
 * to pair its opening with its closing.
 */
export function sessionRef(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 12);
}

export interface LegacySession {
  id: string;
  principal: string;
  transport: NodeStreamableHTTPServerTransport;
  server: McpServer | Server;
  /** Ids of the requests seen in this session, oldest first (a Set keeps insertion order). */
  requestIds: Set<string>;
  /** Requests of this session being answered (POST responses not yet ended, streamed or not). */
  openRequests?: number;
  /** When its last response ended or began (this table's own counter): the smallest is the least recently active. */
  lastActive?: number;
}

export class LegacySessions {
  private readonly byId = new Map<string, LegacySession>();
  /** Sessions per principal, counting those whose `initialize` is still being answered. */
  private readonly held = new Map<string, number>();
  /** Orders activity without reading the wall clock: each begun or ended response takes the next value. */
  private clock = 0;

  constructor(
    readonly maxPerPrincipal: number,
    private readonly maxRememberedIds = 65_536,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  /** The session `id` names, only when `principal` owns it. */
  find(id: string, principal: string): LegacySession | undefined {
    const session = this.byId.get(id);
    return session && session.principal === principal ? session : undefined;
  }

  /** Reserves a place for a new session of `principal`; false when it already holds the most it may. */
  reserve(principal: string): boolean {
    const count = this.held.get(principal) ?? 0;
    if (count >= this.maxPerPrincipal) return false;
    this.held.set(principal, count + 1);
    return true;
  }

  /**
   * Reserves a place for a new session of `principal`, first closing its least recently active
   * idle session when it is at the cap. `evicted` is that session, already forgotten here (its
   * id is unknown from now on; the caller closes its transport). False: at the cap with every
   * session busy.
   */
  reserveOrEvict(principal: string): { reserved: true; evicted?: LegacySession } | { reserved: false } {
    if (this.reserve(principal)) return { reserved: true };
    let victim: LegacySession | undefined;
    for (const session of this.byId.values()) {
      if (session.principal !== principal || (session.openRequests ?? 0) > 0) continue;
      if (!victim || (session.lastActive ?? 0) < (victim.lastActive ?? 0)) victim = session;
    }
    if (!victim) return { reserved: false };
    this.remove(victim.id);
    return this.reserve(principal) ? { reserved: true, evicted: victim } : { reserved: false };
  }

  /**
   * Notes activity on `session` for the least-recently-active order, and with `request` (a POST)
   * counts it as being answered until its response ends (its 'close', which a response emits once
   * it has finished or its connection went away). A GET stream is activity, not a request.
   */
  track(session: LegacySession, response: { once(event: 'close', listener: () => void): unknown }, request: boolean): void {
    session.lastActive = ++this.clock;
    if (!request) return;
    session.openRequests = (session.openRequests ?? 0) + 1;
    response.once('close', () => {
      session.openRequests = Math.max(0, (session.openRequests ?? 1) - 1);
      session.lastActive = ++this.clock;
    });
  }

  /** Gives back a reservation, or the place of a session that ended. */
  release(principal: string): void {
    const count = (this.held.get(principal) ?? 0) - 1;
    if (count > 0) this.held.set(principal, count);
    else this.held.delete(principal);
  }

  add(session: LegacySession): void {
    this.byId.set(session.id, session);
  }

  /** Forgets a session (its transport closed); true when it was live. */
  remove(id: string): boolean {
    const session = this.byId.get(id);
    if (!session) return false;
    this.byId.delete(id);
    this.release(session.principal);
    return true;
  }

  /**
   * Records the request ids of a message; returns the first one already used in this session
   * (and records none of them), or undefined when all are new.
   */
  claimRequestIds(session: LegacySession, ids: (string | number)[]): string | number | undefined {
    // Typed keys: the number 1 and the string "1" are different JSON-RPC ids.
    const keys = ids.map((id) => `${typeof id}:${id}`);
    const seen = new Set<string>();
    for (const [i, key] of keys.entries()) {
      if (session.requestIds.has(key) || seen.has(key)) return ids[i];
      seen.add(key);
    }
    for (const key of keys) {
      session.requestIds.add(key);
      if (session.requestIds.size > this.maxRememberedIds) {
        const oldest = session.requestIds.values().next();
        if (!oldest.done) session.requestIds.delete(oldest.value);
      }
    }
    return undefined;
  }

  all(): LegacySession[] {
    return [...this.byId.values()];
  }
}
