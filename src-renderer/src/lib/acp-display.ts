/**
 * Words for an observed ACP session, one place for all of its views: its state, the parties,
 * tool call kinds and statuses, permission option kinds and outcomes. State is always shown in
 * words; the tones (a pill's colour) only help, never carry the meaning alone.
 */
import type { Tone } from '../components/status-pill';
import type { PartyInfo, PermissionView, SessionState, SessionSummary } from '../../../src-shared/protocol/acp/session-view';
import type { Decision } from '../../../src-shared/vocabulary/decisions';

export const SESSION_STATE_LABELS: Record<SessionState, string> = {
  active: 'Active',
  waiting: 'Waiting for permission',
  idle: 'Idle',
  ended: 'Ended',
};

export const SESSION_STATE_TONES: Record<SessionState, Tone> = {
  active: 'busy',
  waiting: 'warn',
  idle: 'plain',
  ended: 'plain',
};

/** `Zed 0.190.1` from an initialize's clientInfo or agentInfo; what is missing is said so. */
export function partyLine(party: PartyInfo): string {
  const name = party.title ?? party.name;
  if (!name) return party.version ? `unnamed ${party.version}` : 'not announced';
  return party.version ? `${name} ${party.version}` : name;
}

export function endedLine(ended: NonNullable<SessionSummary['ended']>): string {
  if (ended.reason === 'editor-disconnect') return 'the editor disconnected';
  if (ended.reason === 'closed') return 'the session was closed';
  const how = ended.signal ? `signal ${ended.signal}` : ended.exitCode !== null ? `exit code ${ended.exitCode}` : 'unknown status';
  return `the agent exited (${how})`;
}

/** A tool call's or plan entry's status word as a tone. */
export function statusTone(status: string): Tone {
  if (status === 'completed') return 'ok';
  if (status === 'failed') return 'bad';
  if (status === 'in_progress') return 'busy';
  if (status === 'pending') return 'plain';
  return 'info';
}

export function statusLabel(status: string): string {
  return status === 'in_progress' ? 'in progress' : status.replace(/_/g, ' ');
}

/** What became of a permission request, in words. */
export function permissionOutcomeLine(permission: PermissionView): string {
  const outcome = permission.outcome;
  if (!outcome) return 'Waiting for an answer';
  if (outcome.outcome === 'cancelled') return outcome.by === 'cancelled' ? 'Cancelled (the prompt turn was cancelled)' : `Cancelled by ${byLine(outcome.by)}`;
  const option = permission.options.find((o) => o.optionId === outcome.optionId);
  return `${byLine(outcome.by)} chose “${option?.name ?? outcome.optionId ?? '?'}”${option ? ` (${optionKindLabel(option.kind)})` : ''}`;
}

function byLine(by: string): string {
  if (by === 'editor') return 'The editor';
  if (by.startsWith('plane:')) return `${by.slice('plane:'.length)} at the plane`;
  return by;
}

export function optionKindLabel(kind: string): string {
  return (
    ({ allow_once: 'allow once', allow_always: 'allow always', reject_once: 'reject once', reject_always: 'reject always' } as Record<string, string>)[kind] ??
    kind.replace(/_/g, ' ')
  );
}

/** Whether an option allows (approve) or rejects (deny) what is asked. */
export function optionDecision(kind: string): Exclude<Decision, 'snooze'> {
  return kind.startsWith('reject') ? 'deny' : 'approve';
}
