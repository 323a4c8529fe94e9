/**
 * The approvals inbox: every suspended run in one queue, whatever suspended it, oldest first;
 * snoozed items after the rest (a snooze is not a deny: they stay here). Select several for a
 * batch approve or deny. A setting turns system notifications for new items on or off.
 */
import { useEffect, useId, useState, type FormEvent } from 'react';
import { EmptyState } from '../components/empty-state';
import { useNow } from '../components/use-now';
import { approvableDirectly } from '../lib/wait-description';
import type { BatchDecision } from '../store/approvals-slice';
import { useApp } from '../store/store-context';
import { WaitItem } from './wait-item';

function NotificationSetting() {
  const id = useId();
  const on = useApp((s) => s.preferences.notifications);
  const permission = useApp((s) => s.notificationPermission);
  const setNotifications = useApp((s) => s.setNotifications);
  const note =
    permission === 'unsupported'
      ? 'This window cannot show system notifications; new items are announced here.'
      : permission === 'denied'
        ? 'Notifications are blocked for this page in the browser settings.'
        : on && permission === 'default'
          ? 'The browser has not been asked yet.'
          : '';
  return (
    <div className="setting">
      <label className="choice" htmlFor={`${id}-notify`}>
        <input id={`${id}-notify`} type="checkbox" checked={on} onChange={(e) => void setNotifications(e.target.checked)} aria-describedby={note ? `${id}-note` : undefined} />
        Notify me when a run starts waiting
      </label>
      {note ? (
        <span id={`${id}-note`} className="field-hint">
          {note}{' '}
          {on && permission === 'default' ? (
            // A permission prompt needs a click of the person's own.
            <button type="button" className="link-button" onClick={() => void setNotifications(true)}>
              Allow notifications
            </button>
          ) : null}
        </span>
      ) : null}
    </div>
  );
}

function BatchBar({ total }: { total: number }) {
  const id = useId();
  const waiting = useApp((s) => s.waiting);
  const selected = useApp((s) => s.selectedWaits);
  const selectAll = useApp((s) => s.selectAllWaits);
  const batchDecide = useApp((s) => s.batchDecide);
  const [reason, setReason] = useState('');
  const [denying, setDenying] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const chosen = waiting.filter((r) => selected[r.runId]);
  const approvable = chosen.filter((r) => approvableDirectly(r.pending!)).length;
  const all = chosen.length === total && total > 0;

  const run = async (decision: BatchDecision) => {
    const outcome = await batchDecide(decision, decision === 'deny' ? reason.trim() : undefined);
    const verb = decision === 'approve' ? 'Approved' : 'Denied';
    setMessage(
      `${verb} ${outcome.done}.` +
        (outcome.skipped ? ` Skipped ${outcome.skipped}: ${decision === 'approve' ? 'a budget, input or recovery needs your value, decided on its own' : 'recoveries and halts are resolved on their own'}.` : '') +
        (outcome.failed ? ` ${outcome.failed} failed (see the item).` : ''),
    );
    setDenying(false);
    setReason('');
  };
  const submitDeny = (event: FormEvent) => {
    event.preventDefault();
    if (!reason.trim()) return setMessage('Say why before denying: the reason is journaled with each decision.');
    void run('deny');
  };

  return (
    <div className="batch-bar" role="group" aria-label="Batch decisions">
      <label className="choice">
        <input type="checkbox" checked={all} onChange={(e) => selectAll(e.target.checked)} />
        Select all
      </label>
      <span className="muted">{chosen.length} selected</span>
      <button type="button" className="button small primary" disabled={approvable === 0} onClick={() => void run('approve')}>
        Approve selected{approvable !== chosen.length && approvable > 0 ? ` (${approvable})` : ''}
      </button>
      {denying ? (
        <form className="deny-form" onSubmit={submitDeny} aria-label="Deny the selected runs">
          <label htmlFor={`${id}-reason`}>Reason</label>
          <input id={`${id}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
          <button type="submit" className="button small danger">
            Deny {chosen.length}
          </button>
          <button type="button" className="button small" onClick={() => setDenying(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" className="button small danger" disabled={chosen.length === 0} onClick={() => setDenying(true)}>
          Deny selected…
        </button>
      )}
      <span role="status" className="muted">
        {message}
      </span>
    </div>
  );
}

export function ApprovalsSection({ empty }: { empty: string }) {
  const waiting = useApp((s) => s.waiting);
  const loaded = useApp((s) => s.waitingLoaded);
  const error = useApp((s) => s.waitingError);
  const focusWait = useApp((s) => s.focusWait);
  const refreshWaiting = useApp((s) => s.refreshWaiting);
  const now = useNow();
  // Opening the inbox reads it from the plane; after that the journal tail keeps it current.
  useEffect(() => void refreshWaiting(), [refreshWaiting]);
  const active = waiting.filter((r) => !(r.pending?.snoozedUntil && Date.parse(r.pending.snoozedUntil) > now));
  const snoozed = waiting.filter((r) => r.pending?.snoozedUntil && Date.parse(r.pending.snoozedUntil) > now);

  return (
    <div className="section-body">
      <div className="toolbar">
        <p className="toolbar-summary">{loaded ? `${active.length} waiting${snoozed.length ? ` · ${snoozed.length} snoozed` : ''}` : 'Loading the inbox…'}</p>
        <NotificationSetting />
      </div>
      {error ? (
        <p className="inline-error" role="alert">
          Could not read the inbox: {error}
        </p>
      ) : null}
      {waiting.length === 0 ? (
        <EmptyState text={empty} />
      ) : (
        <>
          <BatchBar total={waiting.length} />
          <div className="wait-list">
            {active.map((run) => (
              <WaitItem key={run.pending!.waitId} run={run} focused={focusWait === run.runId} />
            ))}
          </div>
          {snoozed.length > 0 ? (
            <>
              <h2 className="group-heading">Snoozed</h2>
              <div className="wait-list">
                {snoozed.map((run) => (
                  <WaitItem key={run.pending!.waitId} run={run} focused={focusWait === run.runId} />
                ))}
              </div>
            </>
          ) : null}
        </>
      )}
    </div>
  );
}
