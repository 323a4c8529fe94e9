/** Connection state and plane version, announced politely to screen readers when it changes. */
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
      {dataDir ? <span title="Data folder">{dataDir}</span> : null}
      <span aria-label="Plane version">{version ? `AgentPlane ${version}${host === 'headless' ? ' · headless' : ''}` : 'AgentPlane'}</span>
    </footer>
  );
}
