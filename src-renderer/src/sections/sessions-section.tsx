/**
 * Sessions: every kind of session each running peer holds (peers.sessions). Shared-secret
 * sessions: label, who (caller address, client IP), since when, last used, calls made, expiry;
 * revocable by click (peers.revokeSession). Identity credentials in use: one row per calling
 * peer, with its address, first and last seen and calls. Sessions are the peer's own state, not
 * journal records, so this view polls while it is open.
 */
import { useId } from 'react';
import type { PeerSummary } from '../../../src-shared/ipc/contract';
import { EmptyState } from '../components/empty-state';
import { useNow } from '../components/use-now';
import { dateTime, plural, relative } from '../lib/display-format';
import type { IdentityRow, SessionRow } from '../store/peers-slice';
import { useApp } from '../store/store-context';
import { useSessionPolling } from './peers-section';

function SessionRowView({ peerId, row }: { peerId: string; row: SessionRow }) {
  const key = `${peerId}/${row.label}`;
  const busy = useApp((s) => s.sessionBusy[key]);
  const error = useApp((s) => s.sessionErrors[key]);
  const revokeSession = useApp((s) => s.revokeSession);
  const now = useNow();
  const expired = row.expiresAt < now;
  return (
    <tr>
      <th scope="row">
        <code>{row.label}</code>
      </th>
      <td>
        <code>{row.callerAddress}</code>
      </td>
      <td>
        <code>{row.clientIp}</code>
      </td>
      <td title={dateTime(row.issuedAt)}>{relative(row.issuedAt, now)}</td>
      <td title={row.lastUsedAt === null ? undefined : dateTime(row.lastUsedAt)}>{row.lastUsedAt === null ? 'never' : relative(row.lastUsedAt, now)}</td>
      <td>{row.calls}</td>
      <td title={dateTime(row.expiresAt)}>{expired ? 'expired' : relative(row.expiresAt, now)}</td>
      <td>
        <button type="button" className="button small danger" disabled={busy} onClick={() => void revokeSession(peerId, row.label)} aria-label={`Revoke session ${row.label} on ${peerId}`}>
          {busy ? 'Revoking…' : 'Revoke'}
        </button>
        {error ? (
          <span className="inline-error" role="alert">
            {error}
          </span>
        ) : null}
      </td>
    </tr>
  );
}

function IdentityTable({ peerId, rows }: { peerId: string; rows: IdentityRow[] }) {
  const now = useNow();
  return (
    <table className="table compact">
      <caption>Identity credentials in use on {peerId}</caption>
      <thead>
        <tr>
          <th scope="col">Caller peer</th>
          <th scope="col">Client IP</th>
          <th scope="col">First seen</th>
          <th scope="col">Last used</th>
          <th scope="col">Calls</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.caller}>
            <th scope="row">
              <code>peer:{row.caller}</code>
            </th>
            <td>
              <code>{row.clientIp}</code>
            </td>
            <td title={dateTime(row.firstSeenAt)}>{relative(row.firstSeenAt, now)}</td>
            <td title={dateTime(row.lastUsedAt)}>{relative(row.lastUsedAt, now)}</td>
            <td>{row.calls}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function PeerSessions({ peer }: { peer: PeerSummary }) {
  const id = useId();
  const entry = useApp((s) => s.sessions[peer.id]);
  return (
    <section className="panel" aria-labelledby={id}>
      <h2 id={id}>
        {peer.name} <span className="sub">{peer.address}</span>
      </h2>
      {!entry ? (
        <p className="muted">Reading sessions…</p>
      ) : entry.error ? (
        <p className="inline-error" role="alert">
          {entry.error}
        </p>
      ) : (
        <>
          {entry.rows.length === 0 ? (
            <p className="muted">No live sessions on {peer.id}. A caller gets one with GET /mcpv2/session on its address.</p>
          ) : (
            <table className="table compact">
              <caption>Sessions of {peer.id}</caption>
              <thead>
                <tr>
                  <th scope="col">Label</th>
                  <th scope="col">Caller address</th>
                  <th scope="col">Client IP</th>
                  <th scope="col">Issued</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Calls</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {entry.rows.map((row) => (
                  <SessionRowView key={row.label} peerId={peer.id} row={row} />
                ))}
              </tbody>
            </table>
          )}
          {entry.identities.length > 0 ? <IdentityTable peerId={peer.id} rows={entry.identities} /> : null}
        </>
      )}
    </section>
  );
}

export function SessionsSection({ empty }: { empty: string }) {
  const peers = useApp((s) => s.peers);
  const sessions = useApp((s) => s.sessions);
  const refreshSessions = useApp((s) => s.refreshSessions);
  useSessionPolling();
  const running = peers.filter((p) => p.status === 'running');
  // Counted as listed: each peer's sessions table, and its identity credentials table apart.
  const total = running.reduce((n, p) => n + (sessions[p.id]?.rows.length ?? 0), 0);
  const identities = running.reduce((n, p) => n + (sessions[p.id]?.identities.length ?? 0), 0);
  if (running.length === 0) {
    return (
      <div className="section-body">
        <EmptyState text={empty} />
        {peers.length > 0 ? <p className="muted">No peer is running: start one in Peers to see the sessions it issues.</p> : null}
      </div>
    );
  }
  return (
    <div className="section-body">
      <div className="toolbar">
        <p className="toolbar-summary">
          {plural(total, 'session')}
          {identities > 0 ? ` and ${plural(identities, 'identity credential')} in use` : ''} on {plural(running.length, 'running peer')} · refreshed every 5 s
        </p>
        <button type="button" className="button small" onClick={() => void refreshSessions()}>
          Refresh now
        </button>
      </div>
      {running.map((peer) => (
        <PeerSessions key={peer.id} peer={peer} />
      ))}
    </div>
  );
}
