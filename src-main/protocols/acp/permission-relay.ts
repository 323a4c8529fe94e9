/**
 * `--policy inbox`: each session/request_permission the agent sends the editor is also put in
 * the approvals inbox, and the first answer wins, the editor's or a person's at the plane.
 *
 * - The editor answers first: its response goes to the agent as usual and the inbox item is
 *   settled (`editor`).
 * - A person answers first: the tap sends the agent the chosen option as the response to its
 *   request, and tells the editor the request is withdrawn with `$/cancel_request` (ACP's
 *   cancellation notification, `{requestId}`); an editor that does not know it may still answer
 *   later, and that answer is withheld from the agent, which has had its answer.
 * - The prompt turn ends as `cancelled` while the request is open: the item is settled
 *   (`cancelled`); ACP has the editor answer open requests as cancelled itself.
 *
 * This runs on the forwarding path, so it parses only the few lines that can matter (cheap
 * substring checks first) and never waits: the inbox is told, not asked.
 */
import type { WireDirection } from '../../../src-shared/protocol/acp/session-view';

export type PermissionAnswer = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

export interface HeldPermission {
  sessionId: string;
  /** `toEditor:<JSON of the request id>`, as the session fold names it. */
  requestKey: string;
  params: unknown;
  at: string;
}

/** Where held requests go (the plane's approvals inbox); answers come back through PermissionRelay.answer. */
export interface PermissionInbox {
  hold(request: HeldPermission): void;
  settled(requestKey: string, by: 'editor' | 'cancelled'): void;
}

type JsonRpcId = string | number;

interface Open {
  id: JsonRpcId;
  sessionId: string;
  answeredBy: 'plane' | null;
}

function parseObject(line: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isId = (id: unknown): id is JsonRpcId => typeof id === 'string' || typeof id === 'number';

export class PermissionRelay {
  private readonly open = new Map<string, Open>();
  /** session/prompt requests in flight (the editor's ids), so a cancelled turn can settle its session's requests. */
  private readonly prompts = new Map<string, string>();

  constructor(
    private readonly inbox: PermissionInbox,
    private readonly insert: (dir: WireDirection, line: Buffer) => void,
  ) {}

  /** A line from the agent to the editor (always forwarded). */
  fromAgent(line: Buffer): void {
    const text = line.toString('latin1');
    if (text.includes('session/request_permission')) {
      const m = parseObject(line);
      if (m?.method === 'session/request_permission' && isId(m.id)) {
        const params = (m.params ?? {}) as Record<string, unknown>;
        const sessionId = typeof params.sessionId === 'string' ? params.sessionId : '';
        const requestKey = `toEditor:${JSON.stringify(m.id)}`;
        this.open.set(requestKey, { id: m.id, sessionId, answeredBy: null });
        this.inbox.hold({ sessionId, requestKey, params: m.params, at: new Date().toISOString() });
      }
      return;
    }
    if (this.prompts.size > 0 && text.includes('stopReason')) {
      const m = parseObject(line);
      if (!m || !isId(m.id) || m.method !== undefined) return;
      const sessionId = this.prompts.get(JSON.stringify(m.id));
      if (sessionId === undefined) return;
      this.prompts.delete(JSON.stringify(m.id));
      const result = m.result as { stopReason?: unknown } | undefined;
      if (result?.stopReason !== 'cancelled') return;
      for (const [key, open] of this.open) {
        if (open.sessionId !== sessionId) continue;
        this.open.delete(key);
        if (open.answeredBy === null) this.inbox.settled(key, 'cancelled');
      }
    }
  }

  /** A line from the editor to the agent: false withholds it (an answer the agent already has from the plane). */
  fromEditor(line: Buffer): boolean {
    const text = line.toString('latin1');
    if (text.includes('session/prompt')) {
      const m = parseObject(line);
      const params = m?.params as { sessionId?: unknown } | undefined;
      if (m?.method === 'session/prompt' && isId(m.id) && typeof params?.sessionId === 'string') this.prompts.set(JSON.stringify(m.id), params.sessionId);
      return true;
    }
    if (this.open.size === 0 || !(text.includes('"result"') || text.includes('"error"'))) return true;
    const m = parseObject(line);
    if (!m || m.method !== undefined || !isId(m.id)) return true;
    const key = `toEditor:${JSON.stringify(m.id)}`;
    const open = this.open.get(key);
    if (!open) return true;
    this.open.delete(key);
    if (open.answeredBy === 'plane') return false;
    this.inbox.settled(key, 'editor');
    return true;
  }

  /** A person's answer at the plane; false when the request is no longer open (the editor was first). */
  answer(requestKey: string, answer: PermissionAnswer): boolean {
    const open = this.open.get(requestKey);
    if (!open || open.answeredBy !== null) return false;
    open.answeredBy = 'plane';
    const outcome = answer.outcome === 'selected' ? { outcome: 'selected', optionId: answer.optionId } : { outcome: 'cancelled' };
    this.insert('toAgent', Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: open.id, result: { outcome } })}\n`));
    this.insert('toEditor', Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: open.id } })}\n`));
    return true;
  }
}
