/**
 * Peers: every local peer the plane hosts, with its state in words, its address (copyable),
 * health, live MCPv2 sessions and uptime; start, stop and restart by click, with progress while
 * a start is in flight and the plane's own reason when it cannot. Everything shown comes from
 * the plane (peers.list and peers.changed), so a reload shows the same.
 */
import { useEffect, useState } from 'react';
import type { PeerSummary } from '../../../src-shared/ipc/contract';
import { CopyButton } from '../components/copy-button';
import { EmptyState } from '../components/empty-state';
import { StatusPill, type Tone } from '../components/status-pill';
import { useNow } from '../components/use-now';
import { duration } from '../lib/display-format';
import type { PeerAction } from '../store/peers-slice';
import { useApp } from '../store/store-context';
import { FirstRunChecklist } from './first-run-checklist';
import { PeerCreateForm } from './peer-create-form';
import { PeerDetail } from './peer-detail';

const SESSION_POLL_MS = 5000;

export const PEER_STATUS: Record<PeerSummary['status'], { label: string; tone: Tone }> = {
  running: { label: 'Running', tone: 'ok' },
  starting: { label: 'Starting…', tone: 'busy' },
  stopping: { label: 'Stopping…', tone: 'busy' },
  stopped: { label: 'Stopped', tone: 'plain' },
  failed: { label: 'Failed', tone: 'bad' },
};

/** Polls sessions of running peers while a view that shows them is mounted. */
export function useSessionPolling() {
  const refreshSessions = useApp((s) => s.refreshSessions);
  const runningKey = useApp((s) =>
    s.peers
      .filter((p) => p.status === 'running')
      .map((p) => p.id)
      .join(','),
  );
  useEffect(() => {
    void refreshSessions();
    const timer = window.setInterval(() => void refreshSessions(), SESSION_POLL_MS);
    return () => window.clearInterval(timer);
  }, [refreshSessions, runningKey]);
}

function Uptime({ since }: { since: string }) {
  const now = useNow();
  return <>{duration(now - Date.parse(since))}</>;
}

function Health({ peer }: { peer: PeerSummary }) {
  if (peer.revoked) return <StatusPill tone="bad">Revoked</StatusPill>;
  if (peer.status === 'running') return <StatusPill tone="ok" title="Answered its health check when it started and is still running">Healthy</StatusPill>;
  if (peer.status === 'starting') return <span className="muted">Checking…</span>;
  if (peer.status === 'failed') return <StatusPill tone="bad" title={peer.error ?? undefined}>Unhealthy</StatusPill>;
  return <span className="muted">—</span>;
}

function PeerButtons({ peer, busy }: { peer: PeerSummary; busy: PeerAction | undefined }) {
  const peerAction = useApp((s) => s.peerAction);
  const running = peer.status === 'running';
  const transitioning = peer.status === 'starting' || peer.status === 'stopping' || busy !== undefined;
  const label = (action: PeerAction, text: string, busyText: string) => (busy === action ? busyText : text);
  return (
    <div className="row-actions">
      {running || peer.status === 'stopping' ? (
        <button type="button" className="button small" aria-label={`Stop ${peer.id}`} disabled={transitioning} onClick={() => void peerAction(peer.id, 'stop')}>
          {busy === 'stop' ? <span className="spinner" aria-hidden="true" /> : null}
          {label('stop', 'Stop', 'Stopping…')}
        </button>
      ) : (
        <button
          type="button"
          className="button small primary"
          aria-label={`Start ${peer.id}`}
          disabled={transitioning || peer.revoked}
          onClick={() => void peerAction(peer.id, 'start')}
        >
          {busy === 'start' || peer.status === 'starting' ? <span className="spinner" aria-hidden="true" /> : null}
          {busy === 'start' || peer.status === 'starting' ? 'Starting…' : 'Start'}
        </button>
      )}
      <button type="button" className="button small" aria-label={`Restart ${peer.id}`} disabled={!running || transitioning} onClick={() => void peerAction(peer.id, 'restart')}>
        {busy === 'restart' ? <span className="spinner" aria-hidden="true" /> : null}
        {label('restart', 'Restart', 'Restarting…')}
      </button>
    </div>
  );
}

export function PeersSection({ empty }: { empty: string }) {
  const peers = useApp((s) => s.peers);
  const peersLoaded = useApp((s) => s.peersLoaded);
  const busy = useApp((s) => s.peerBusy);
  const errors = useApp((s) => s.peerErrors);
  const sessions = useApp((s) => s.sessions);
  const openPeer = useApp((s) => s.route.peerId);
  const navigate = useApp((s) => s.navigate);
  const peerFormRequest = useApp((s) => s.peerFormRequest);
  const [creating, setCreating] = useState(false);
  useSessionPolling();
  useEffect(() => {
    if (peerFormRequest > 0) setCreating(true);
  }, [peerFormRequest]);

  const running = peers.filter((p) => p.status === 'running').length;
  const selected = peers.find((p) => p.id === openPeer) ?? null;

  return (
    <div className="section-body">
      <FirstRunChecklist />
      <div className="toolbar">
        <p className="toolbar-summary">{peersLoaded ? `${peers.length} ${peers.length === 1 ? 'peer' : 'peers'} · ${running} running` : 'Loading peers…'}</p>
        <button type="button" className="button primary" aria-expanded={creating} onClick={() => setCreating((c) => !c)}>
          Create peer
        </button>
      </div>
      {creating ? (
        <PeerCreateForm
          onClose={(created) => {
            setCreating(false);
            if (created) navigate({ section: 'peers', peerId: created });
          }}
        />
      ) : null}
      {peers.length === 0 ? (
        <EmptyState text={empty} />
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Peers</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Address</th>
                <th scope="col">Health</th>
                <th scope="col" className="num">
                  Sessions
                </th>
                <th scope="col">Uptime</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {peers.map((peer) => {
                const status = PEER_STATUS[peer.status];
                const error = errors[peer.id] ?? (peer.status === 'failed' && peer.error ? `${peer.id} failed: ${peer.error}` : undefined);
                const open = selected?.id === peer.id;
                const liveSessions = sessions[peer.id];
                return (
                  <PeerRows key={peer.id} error={error}>
                    <tr className={open ? 'row-selected' : undefined}>
                      <th scope="row">
                        <button
                          type="button"
                          className="link-button"
                          aria-expanded={open}
                          aria-controls="peer-detail"
                          aria-label={`${peer.name} (${peer.id}) details`}
                          onClick={() => navigate({ section: 'peers', peerId: open ? null : peer.id })}
                        >
                          {peer.name}
                        </button>
                        <span className="sub">{peer.id}</span>
                      </th>
                      <td>
                        <StatusPill tone={status.tone} title={peer.error ?? undefined}>
                          {status.label}
                        </StatusPill>
                      </td>
                      <td>
                        {peer.address ? (
                          <span className="address">
                            <code>{peer.address}</code>
                            <CopyButton value={peer.address} label={`Copy address of ${peer.id}`} />
                          </span>
                        ) : (
                          <span className="muted">{peer.port ? `not listening (port ${peer.port})` : 'not listening'}</span>
                        )}
                      </td>
                      <td>
                        <Health peer={peer} />
                      </td>
                      <td className="num">{peer.status === 'running' ? (liveSessions ? (liveSessions.error ? '?' : liveSessions.rows.length) : '…') : '—'}</td>
                      <td className="nowrap">{peer.status === 'running' && peer.startedAt ? <Uptime since={peer.startedAt} /> : <span className="muted">—</span>}</td>
                      <td>
                        <PeerButtons peer={peer} busy={busy[peer.id]} />
                      </td>
                    </tr>
                  </PeerRows>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {selected ? <PeerDetail peer={selected} /> : null}
    </div>
  );
}

/** A peer's row, and under it the error of the last thing tried on it, where it was tried. */
function PeerRows({ children, error }: { children: React.ReactNode; error: string | undefined }) {
  return (
    <>
      {children}
      {error ? (
        <tr className="row-error">
          <td colSpan={7}>
            <p role="alert" className="inline-error">
              {error}
            </p>
          </td>
        </tr>
      ) : null}
    </>
  );
}
