/**
 * A permission request the agent sent the editor (session/request_permission): the tool call it
 * is about, the options it offered, and what became of it (who chose which option, or that the
 * turn was cancelled). Under `--policy inbox` an open request can be answered here by choosing
 * one of the options (`acp.answer`; the tap gives the agent the first answer, the editor's or
 * this one); under `observe` the editor answers and this only shows it.
 */
import { useId } from 'react';
import type { PermissionView, SessionSummary, SessionView } from '../../../src-shared/protocol/acp/session-view';
import { StatusPill } from '../components/status-pill';
import { clockTime } from '../lib/display-format';
import { optionDecision, optionKindLabel, permissionOutcomeLine } from '../lib/acp-display';
import { useApp } from '../store/store-context';

export function PermissionCard({ session, permission }: { session: Pick<SessionSummary, 'runId' | 'policy' | 'ended'>; permission: PermissionView }) {
  const headingId = useId();
  const noteId = useId();
  const busy = useApp((s) => s.acpPermissionBusy[permission.requestKey]);
  const error = useApp((s) => s.acpPermissionErrors[permission.requestKey]);
  const answerPermission = useApp((s) => s.answerPermission);
  const open = permission.outcome === null;
  const answerable = open && session.policy === 'inbox' && session.ended === null;
  const note = !open
    ? null
    : session.ended
      ? 'The session has ended: this request can no longer be answered.'
      : session.policy !== 'inbox'
        ? 'The editor answers this request: the tap only observes (start it with --policy inbox to answer here).'
        : 'Choose an option to answer here, or answer in the editor: the agent gets the first answer.';
  const title = permission.toolCall.title ?? permission.toolCall.toolCallId;
  return (
    <article className={`permission-card${open ? ' permission-open' : ''}`} aria-labelledby={headingId}>
      <header className="tool-head">
        <span className="tool-kind">permission</span>
        <h4 id={headingId}>Permission for {title}</h4>
        <StatusPill tone={open ? 'warn' : permission.outcome?.outcome === 'cancelled' ? 'plain' : 'ok'}>{open ? 'Waiting' : 'Answered'}</StatusPill>
      </header>
      <p className="muted">
        Asked at <time dateTime={permission.at}>{clockTime(permission.at)}</time>
        {permission.toolCall.toolKind ? ` · tool kind ${permission.toolCall.toolKind}` : ''}
        {permission.toolCall.locations.length > 0 ? ` · ${permission.toolCall.locations.map((l) => l.path).join(', ')}` : ''}
      </p>
      <p>{permissionOutcomeLine(permission)}</p>
      <div className="row-actions" role="group" aria-label={`Options for ${title}`}>
        {permission.options.map((option) => {
          const chosen = permission.outcome?.optionId === option.optionId;
          return (
            <button
              key={option.optionId}
              type="button"
              className={`button small${optionDecision(option.kind) === 'deny' ? ' danger' : ''}${chosen ? ' button-chosen' : ''}`}
              disabled={!answerable || busy !== undefined}
              aria-describedby={note ? noteId : undefined}
              aria-pressed={open ? undefined : chosen}
              onClick={() => void answerPermission(session.runId, permission, option.optionId)}
            >
              {option.name} <span className="muted">({optionKindLabel(option.kind)})</span>
              {chosen ? ' — chosen' : ''}
            </button>
          );
        })}
      </div>
      {note ? (
        <p id={noteId} className="field-hint">
          {note}
        </p>
      ) : null}
      {busy ? <p className="muted" role="status">Sending the answer…</p> : null}
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}

export function AcpPermissions({ view }: { view: SessionView }) {
  if (view.permissions.length === 0) return <p className="muted">No permission requests in this session yet.</p>;
  return (
    <div className="stack">
      {view.permissions.map((p) => (
        <PermissionCard key={p.requestKey} session={view} permission={p} />
      ))}
    </div>
  );
}
