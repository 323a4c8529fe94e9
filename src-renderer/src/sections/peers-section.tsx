/** Peers: the list the plane reports (empty until peers can be created). */
import { useApp } from '../store/store-context';
import { EmptyState } from '../components/empty-state';

export function PeersSection({ empty }: { empty: string }) {
  const peers = useApp((s) => s.peers);
  if (peers.length === 0) return <EmptyState text={empty} />;
  return (
    <table className="table">
      <caption className="visually-hidden">Peers</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
          <th scope="col">Address</th>
        </tr>
      </thead>
      <tbody>
        {peers.map((peer) => (
          <tr key={peer.id}>
            <td>{peer.name}</td>
            <td>{peer.status}</td>
            <td>{peer.address ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
