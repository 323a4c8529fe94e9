/**
 * A quick authenticated ping from a peer's detail (peers.ping): the plane opens a shared-secret
 * session on the peer, as any caller would, and pings with it. The session then shows in
 * Sessions, used once, so that view is never empty by construction.
 */
import type { PeerSummary } from '../../../src-shared/ipc/contract';
import { useApp } from '../store/store-context';

export function PeerPing({ peer }: { peer: PeerSummary }) {
  const ping = useApp((s) => s.peerPings[peer.id]);
  const pingPeer = useApp((s) => s.pingPeer);
  const openSection = useApp((s) => s.setSection);
  // Only a running peer answers, and one that accepts peer credentials only issues no sessions.
  const reason = peer.status !== 'running' ? `${peer.id} is not running.` : peer.auth === 'identity' ? `${peer.id} accepts peer credentials only: it issues no sessions.` : null;
  return (
    <div className="peer-ping">
      <h3>Session check</h3>
      <p>
        <button type="button" className="button small" disabled={reason !== null || ping?.busy === true} onClick={() => void pingPeer(peer.id)}>
          {ping?.busy ? 'Pinging…' : 'Open a session and ping'}
        </button>{' '}
        {reason ? <span className="muted">{reason}</span> : null}
      </p>
      {ping?.result ? (
        <p role="status">
          {peer.id} answered in {ping.result.latencyMs} ms on session <code>{ping.result.label}</code>.{' '}
          <button type="button" className="link-button" onClick={() => openSection('sessions')}>
            See it in Sessions
          </button>
        </p>
      ) : null}
      {ping?.error ? (
        <p className="inline-error" role="alert">
          {ping.error}
        </p>
      ) : null}
    </div>
  );
}
