/** Connection state, where the plane keeps its data (and its journal, when shared) and its version, announced politely to screen readers when it changes. */
import type { ConnectionState } from '../../../src-shared/ipc/client';
import { useApp } from '../store/store-context';

const LABELS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  closed: 'Disconnected',
};

export function StatusBar() {
  const connection = useApp((s) => s.connection);
  const version = useApp((s) => s.status?.version);
  const host = useApp((s) => s.status?.host);
  const dataDir = useApp((s) => s.status?.dataDir);
  // A shared PostgreSQL journal is named (its URL as the plane shows it: password masked);
  // the embedded SQLite file in the data folder needs no second mention.
  const sharedJournal = useApp((s) => (s.status && /^postgres(ql)?:/.test(s.status.journal) ? s.status.journal : null));
  // On a team plane, which instance this is: the host its runs are held under (plane@<id>).
  const instance = useApp((s) => s.status?.instance);
  const error = useApp((s) => s.error);
  return (
    <footer className="status-bar">
      <span className={`connection connection-${connection}`} role="status" aria-label="Connection" aria-live="polite">
        <span className="dot" aria-hidden="true" />
        {LABELS[connection]}
      </span>
      {error ? (
        <span className="status-error" role="alert">
          {error}
        </span>
      ) : null}
      <span className="spacer" />
      {sharedJournal ? (
        <span title="Shared journal (PostgreSQL)" aria-label="Shared journal">
          journal {sharedJournal}
        </span>
      ) : null}
      {instance ? (
        <span title="This instance of the team plane: the host its runs are held under" aria-label="Instance">
          {instance}
        </span>
      ) : null}
      {dataDir ? <span title="Data folder">{dataDir}</span> : null}
      <span aria-label="Plane version">{version ? `AgentPlane ${version}${host === 'headless' ? ' · headless' : ''}` : 'AgentPlane'}</span>
    </footer>
  );
}
