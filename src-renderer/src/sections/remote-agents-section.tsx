/**
 * Remote agents: the remote A2A agents this plane's runs called, one card each, with what the
 * card called itself, whether its signature verified against the key pinned for its origin,
 * and the tasks it ran, each linked to the local run and step that asked for it.
 *
 * A changed key is shown with an "Accept new key…" button and a confirmation: the plane refused
 * the card because a different key signed it, which is what an honest rotation looks like and
 * also what an impersonated host looks like. Telling the two apart is the person's call, so
 * the confirmation says what accepting means; nothing here accepts a key by itself.
 *
 * The list is read from the plane when shown (and on journal changes while shown): it is a fold
 * of the journal's `a2a` effects and the pins file, never kept here.
 */
import { useEffect, useId, useState } from 'react';
import type { A2aRemote, A2aRemoteTask, A2aVerification } from '../../../src-shared/protocol/a2a';
import { EmptyState } from '../components/empty-state';
import { StatusPill, type Tone } from '../components/status-pill';
import { dateTime } from '../lib/display-format';
import { formatRoute } from '../lib/route';
import { useApp } from '../store/store-context';

const STANDING: Record<A2aVerification, [tone: Tone, words: string, explanation: string]> = {
  verified: ['ok', 'Signed and verified', 'Its card is signed, and the signature verified against the key pinned for this origin on first use.'],
  'key-changed': ['bad', 'Key changed: calls refused', 'A card signed with a different key was seen, so calls to this origin are refused until you accept the new key.'],
  unsigned: ['warn', 'Unsigned', 'Its card carries no signature: who published it cannot be checked. Calls are allowed; no key is pinned.'],
  unknown: ['plain', 'Not yet read', 'No call got as far as reading its card, so nothing is known of its signature.'],
};

const TASK_TONE: Record<A2aRemoteTask['state'], Tone> = { completed: 'ok', failed: 'bad', 'in-progress': 'busy', unanswered: 'warn' };

function TaskRow({ task }: { task: A2aRemoteTask }) {
  return (
    <li className="remote-task">
      <StatusPill tone={TASK_TONE[task.state]}>{task.state}</StatusPill>{' '}
      {task.taskId ? (
        <span>
          remote task <code>{task.taskId}</code>
        </span>
      ) : (
        <span className="muted">no remote task</span>
      )}{' '}
      {task.skill ? (
        <span className="muted">
          · skill <code>{task.skill}</code>
        </span>
      ) : null}{' '}
      <span className="muted">· for</span>{' '}
      <a href={formatRoute({ section: 'runs', runId: task.runId, seq: null, peerId: null })} className="mono" aria-label={`Open run ${task.runId} (${task.agent}, step ${task.step})`}>
        {task.runId}
      </a>{' '}
      <span className="muted">
        ({task.agent}, step {task.step}){task.at ? ` · ${dateTime(task.at)}` : ''}
      </span>
      {task.error ? (
        <div className="inline-error">
          {task.error.code}
          {task.disposition === 'InDoubt' ? ' (in doubt: the remote agent may have acted)' : task.disposition === 'DidNotHappen' ? ' (nothing was sent)' : ''}: {task.error.message}
        </div>
      ) : null}
    </li>
  );
}

function AcceptKey({ remote }: { remote: A2aRemote }) {
  const accept = useApp((s) => s.acceptRemoteKey);
  const busy = useApp((s) => s.remoteAccepting[remote.origin] === true);
  const error = useApp((s) => s.remoteAcceptErrors[remote.origin]);
  const [confirming, setConfirming] = useState(false);
  return (
    <div className="form-actions">
      {confirming ? (
        <>
          <span>
            Trust key <code>{remote.pendingKeyId}</code> for {remote.origin} from now on, in place of <code>{remote.keyId}</code>? Do this only if you know the agent’s publisher changed its key.
          </span>
          <button type="button" className="button danger" disabled={busy} onClick={() => void accept(remote.origin).then(() => setConfirming(false))}>
            {busy ? 'Accepting…' : 'Yes, accept the new key'}
          </button>
          <button type="button" className="button" onClick={() => setConfirming(false)}>
            Keep the old key
          </button>
        </>
      ) : (
        <button type="button" className="button" onClick={() => setConfirming(true)} aria-label={`Accept the new key for ${remote.origin}…`}>
          Accept new key…
        </button>
      )}
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

function RemoteCard({ remote }: { remote: A2aRemote }) {
  const headingId = useId();
  const [tone, words, explanation] = STANDING[remote.verification];
  return (
    <article className="panel" aria-labelledby={headingId}>
      <div className="panel-head">
        <h2 id={headingId}>{remote.name ?? remote.origin}</h2>
        <StatusPill tone={tone} title={explanation}>
          {words}
        </StatusPill>
      </div>
      {remote.description ? <p>{remote.description}</p> : null}
      <p className="muted">
        Card <code>{remote.card}</code>
        {remote.keyId ? (
          <>
            {' '}
            · pinned key <code>{remote.keyId}</code>
          </>
        ) : null}
        {remote.pendingKeyId ? (
          <>
            {' '}
            · new key seen <code>{remote.pendingKeyId}</code>
          </>
        ) : null}
      </p>
      <p className="muted">{explanation}</p>
      {remote.verification === 'key-changed' ? <AcceptKey remote={remote} /> : null}
      <h3>Tasks</h3>
      <ul className="remote-tasks" aria-label={`Tasks of ${remote.name ?? remote.origin}`}>
        {remote.tasks.map((task, index) => (
          <TaskRow key={`${task.runId}:${task.step}:${index}`} task={task} />
        ))}
      </ul>
    </article>
  );
}

export function RemoteAgentsSection({ empty }: { empty: string }) {
  const remotes = useApp((s) => s.remotes);
  const loaded = useApp((s) => s.remotesLoaded);
  const error = useApp((s) => s.remotesError);
  const refresh = useApp((s) => s.refreshRemotes);
  useEffect(() => void refresh(), [refresh]);
  return (
    <div className="section-body">
      {error ? (
        <p className="inline-error" role="alert">
          Could not read the remote agents: {error}
        </p>
      ) : null}
      {!loaded && !error ? <p className="muted">Reading the remote agents…</p> : null}
      {loaded && remotes.length === 0 ? <EmptyState text={empty} /> : null}
      {remotes.map((remote) => (
        <RemoteCard key={remote.card} remote={remote} />
      ))}
    </div>
  );
}
