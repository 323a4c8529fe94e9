/**
 * Where a run sits in a chain of calls: the run whose peer call admitted it ("Called by") and
 * the runs its own peer calls admitted on peers ("Calls"), each a link to that run's page, so a
 * person follows a question from the plane's agent into the peer's skill run and back. A link
 * the caller's own record does not confirm (runtime/run-links.ts) says so: the callee's
 * admission names it, and nothing more is known.
 *
 * Re-read whenever the run grows: a peer call's callee is admitted between the caller's
 * EffectStarted and its outcome, so the caller's next record always follows it. The callee's
 * state is the live one from the runs list when it is there.
 */
import { useEffect } from 'react';
import type { RunLink, RunView } from '../../../src-shared/ipc/contract';
import { useApp } from '../store/store-context';
import { RunStatus } from './run-status';

function LinkedRun({ link, role }: { link: RunLink; role: 'caller' | 'callee' }) {
  const openRun = useApp((s) => s.openRun);
  const live = useApp((s) => s.runs[link.runId]);
  const where = link.host === '' ? '' : link.host === 'plane' ? 'on the plane' : `on ${link.host}`;
  const step = link.step === null ? 'a step it did not name' : `step ${link.step}`;
  return (
    <li>
      <button type="button" className="link-button mono" onClick={() => openRun(link.runId)} aria-label={`Open ${role === 'caller' ? 'the calling' : 'the called'} run ${link.runId}`}>
        {link.runId}
      </button>{' '}
      {link.agent ? <span>{link.agent}</span> : null} {where ? <span className="muted">{where}</span> : null} <span className="muted">· {role === 'caller' ? `from its ${step}` : `by ${step}`}</span>{' '}
      {link.agent ? <RunStatus run={live ?? { status: link.status, outcome: link.outcome, pending: null }} /> : null}{' '}
      {link.confirmed ? null : (
        <span className="unconfirmed" title="The called run's admission names this caller, but the caller's own record at that step is not a call to it.">
          unconfirmed: only the called run says so
        </span>
      )}
    </li>
  );
}

export function RunLinksFacts({ run }: { run: RunView }) {
  const links = useApp((s) => s.runLinks[run.runId]);
  const loadRunLinks = useApp((s) => s.loadRunLinks);
  useEffect(() => {
    void loadRunLinks(run.runId);
  }, [run.runId, run.lastSeq, loadRunLinks]);
  if (!links || (links.calledBy === null && links.calls.length === 0)) return null;
  return (
    <div className="run-links">
      {links.calledBy ? (
        <section aria-label="Called by">
          <h3>Called by</h3>
          <ul>
            <LinkedRun link={links.calledBy} role="caller" />
          </ul>
        </section>
      ) : null}
      {links.calls.length > 0 ? (
        <section aria-label="Calls to peers">
          <h3>Calls to peers</h3>
          <ul>
            {links.calls.map((link) => (
              <LinkedRun key={link.runId} link={link} role="callee" />
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}
