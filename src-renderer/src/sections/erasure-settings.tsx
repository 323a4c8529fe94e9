/**
 * Forgetting a subject in the Settings view (docs/ERASURE.md): whether new payloads are sealed,
 * retention, the legal holds in force (placed and lifted here), and erasing a subject. Erasing
 * cannot be undone, so it asks again, naming the subject; a held subject's erasure is refused by
 * the plane, and its words (naming the hold) are shown beside the form.
 */
import { useEffect, useId, useState, type FormEvent } from 'react';
import { useStore } from 'zustand';
import { useAppStore } from '../store/store-context';
import { erasureStoreFor, type ErasureSlice } from '../store/erasure-slice';

/** The Settings view's erasure state (its own store, made when the view first shows). */
function useErasure<T>(selector: (state: ErasureSlice) => T): T {
  return useStore(erasureStoreFor(useAppStore()), selector);
}
import { dateTime } from '../lib/display-format';
import type { HoldTargetKind } from '../../../src-shared/vocabulary/holds';

type Target = HoldTargetKind;

function targetOf(kind: Target, id: string): { subject: string } | { caseId: string } {
  return kind === 'subject' ? { subject: id } : { caseId: id };
}

function HoldForm() {
  const kindId = useId();
  const targetId = useId();
  const reasonId = useId();
  const busy = useErasure((s) => s.erasureBusy);
  const addHold = useErasure((s) => s.addHold);
  const [kind, setKind] = useState<Target>('subject');
  const [target, setTarget] = useState('');
  const [reason, setReason] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await addHold(targetOf(kind, target.trim()), reason.trim() || undefined)) {
      setTarget('');
      setReason('');
    }
  };
  return (
    <form className="inline-form" aria-label="Place a legal hold" onSubmit={submit} noValidate>
      <div className="field">
        <label htmlFor={kindId}>Hold on</label>
        <select id={kindId} value={kind} onChange={(e) => setKind(e.target.value as Target)}>
          <option value="subject">a subject</option>
          <option value="case">a case</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor={targetId}>{kind === 'subject' ? 'Subject' : 'Case'}</label>
        <input id={targetId} value={target} placeholder={kind === 'subject' ? 'user:alice' : 'CASE-1'} autoComplete="off" spellCheck={false} onChange={(e) => setTarget(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={reasonId}>Reason</label>
        <input id={reasonId} value={reason} autoComplete="off" onChange={(e) => setReason(e.target.value)} />
      </div>
      <button type="submit" className="button small primary" disabled={busy || target.trim() === ''}>
        Place hold
      </button>
    </form>
  );
}

function EraseForm() {
  const subjectId = useId();
  const reasonId = useId();
  const busy = useErasure((s) => s.erasureBusy);
  const erase = useErasure((s) => s.eraseSubject);
  const last = useErasure((s) => s.lastErasure);
  const [subject, setSubject] = useState('');
  const [reason, setReason] = useState('');
  const [confirming, setConfirming] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!confirming) return setConfirming(true);
    setConfirming(false);
    if (await erase(subject.trim(), reason.trim() || undefined)) {
      setSubject('');
      setReason('');
    }
  };
  return (
    <>
      <form className="inline-form" aria-label="Erase a subject" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={subjectId}>Subject to erase</label>
          <input
            id={subjectId}
            value={subject}
            placeholder="user:alice"
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => {
              setSubject(e.target.value);
              setConfirming(false);
            }}
          />
        </div>
        <div className="field">
          <label htmlFor={reasonId}>Reason</label>
          <input id={reasonId} value={reason} autoComplete="off" onChange={(e) => setReason(e.target.value)} />
        </div>
        <button type="submit" className="button small danger" disabled={busy || subject.trim() === ''}>
          {confirming ? `Erase ${subject.trim()} for good` : 'Erase…'}
        </button>
        {confirming ? (
          <button type="button" className="button small" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        ) : null}
      </form>
      {confirming ? (
        <p role="status" aria-label="Erasure to confirm">
          Erasing destroys {subject.trim()}’s keys: every payload sealed under them reads as erased from now on, here and in every export. It cannot be undone.
        </p>
      ) : null}
      {last ? (
        <p className="muted" role="status" aria-label="Last erasure">
          Erased {last.subject} on {dateTime(last.at)} by {last.by}: {last.keys.length} key{last.keys.length === 1 ? '' : 's'} destroyed (record seq {last.seq}).
        </p>
      ) : null}
    </>
  );
}

export function ErasureSettings() {
  const headingId = useId();
  const daysId = useId();
  const settings = useErasure((s) => s.erasureSettings);
  const holds = useErasure((s) => s.holds);
  const error = useErasure((s) => s.erasureError);
  const actionError = useErasure((s) => s.erasureActionError);
  const busy = useErasure((s) => s.erasureBusy);
  const refresh = useErasure((s) => s.refreshErasure);
  const setSealing = useErasure((s) => s.setSealing);
  const setRetention = useErasure((s) => s.setRetention);
  const removeHold = useErasure((s) => s.removeHold);
  const [days, setDays] = useState('');
  useEffect(() => void refresh(), [refresh]);
  const saveRetention = async (event: FormEvent) => {
    event.preventDefault();
    const text = days.trim();
    if (await setRetention(text === '' ? null : Number(text))) setDays('');
  };
  return (
    <section className="stack" aria-labelledby={headingId}>
      <h2 id={headingId}>Forgetting a subject</h2>
      <p>
        The journal cannot delete, so it forgets by destroying keys: with sealing on, each run’s input, requests, results and seal are written encrypted under its owner’s key. Erasing the owner destroys
        the keys; the payloads then read as erased, and every hash, checkpoint and export stays valid. A legal hold refuses an erasure while it is in force.
      </p>
      {error ? (
        <p className="inline-error" role="alert">
          Could not read the erasure settings: {error}
        </p>
      ) : null}
      {settings ? (
        <>
          <p role="status" aria-label="Sealing">
            {settings.sealPayloads ? 'New payloads are sealed under their owner’s key.' : 'New payloads are written in the clear: nothing written now can be erased.'}{' '}
            <button type="button" className="button small" disabled={busy} onClick={() => void setSealing(!settings.sealPayloads)}>
              {settings.sealPayloads ? 'Stop sealing' : 'Seal new payloads'}
            </button>
          </p>
          <form className="inline-form" aria-label="Retention" onSubmit={saveRetention} noValidate>
            <div className="field">
              <label htmlFor={daysId}>Retention in days</label>
              <input id={daysId} inputMode="numeric" value={days} placeholder={settings.retentionDays === null ? 'off' : String(settings.retentionDays)} onChange={(e) => setDays(e.target.value)} />
              <span className="field-hint">{settings.retentionDays === null ? 'Off: nothing is erased by age.' : `Payloads are erased ${settings.retentionDays} days after their month ends, unless held.`} Empty turns it off.</span>
            </div>
            <button type="submit" className="button small primary" disabled={busy}>
              Save retention
            </button>
          </form>
        </>
      ) : error ? null : (
        <p className="muted">Reading the erasure settings…</p>
      )}
      <h3>Legal holds</h3>
      {holds ? (
        holds.length === 0 ? (
          <p className="muted">No hold is in force.</p>
        ) : (
          <ul className="allow-list" aria-label="Legal holds in force">
            {holds.map((hold) => (
              <li key={hold.holdId}>
                <code>{hold.target.kind === 'subject' ? hold.target.id : `case ${hold.target.id}`}</code> by {hold.by} on {dateTime(hold.at)}
                {hold.reason ? `: ${hold.reason}` : ''}{' '}
                <button type="button" className="button small danger" disabled={busy} onClick={() => void removeHold(targetOf(hold.target.kind, hold.target.id))} aria-label={`Lift the hold on ${hold.target.id}`}>
                  Lift
                </button>
              </li>
            ))}
          </ul>
        )
      ) : null}
      <HoldForm />
      <h3>Erase a subject</h3>
      <EraseForm />
      {actionError ? (
        <p className="form-error" role="alert">
          {actionError}
        </p>
      ) : null}
    </section>
  );
}
