/**
 * Peers as the plane reports them (`peers.list`, then `peers.changed` events with the whole
 * list), plus what a click is doing right now: a start in progress, the error it ended with,
 * a prompt or payment sent from a peer's detail, and the MCPv2 sessions each running peer holds.
 *
 * Sessions are not journaled (they are the peer's own state), so they are polled while a view
 * that shows them is open; everything else follows events.
 */
import type { CommandRequest, CommandResponse, PeerSummary } from '../../../src-shared/ipc/contract';
import type { Result } from '../../../src-shared/ipc/result';
import type { SliceDeps } from './store-types';
import { peerErrorText } from '../lib/peer-errors';

export type PeerAction = 'start' | 'stop' | 'restart';
export type SessionRow = CommandResponse<'peers.sessions'>['sessions'][number];
export type IdentityRow = CommandResponse<'peers.sessions'>['identities'][number];

/** The last quick ping from a peer's detail: the session it opened and the round trip. */
export interface PeerPingState {
  busy: boolean;
  result?: CommandResponse<'peers.ping'>;
  error?: string;
}

export interface PeerCallState {
  busy: boolean;
  to: string;
  result?: unknown;
  error?: string;
  at?: number;
}

export interface SessionsEntry {
  rows: SessionRow[];
  /** Identity credentials in use on the peer, one row per calling peer. */
  identities: IdentityRow[];
  error: string | null;
  loadedAt: number;
}

export interface PeersSlice {
  peers: PeerSummary[];
  peersLoaded: boolean;
  peerBusy: Record<string, PeerAction | undefined>;
  peerErrors: Record<string, string | undefined>;
  /** Keyed `${from}/${skill}`: the last prompt or payment sent from a peer's detail. */
  peerCalls: Record<string, PeerCallState | undefined>;
  sessions: Record<string, SessionsEntry | undefined>;
  /** Keyed `${peerId}/${label}`. */
  sessionBusy: Record<string, boolean | undefined>;
  sessionErrors: Record<string, string | undefined>;
  /** By peer id: the last `peers.ping` from its detail. */
  peerPings: Record<string, PeerPingState | undefined>;
  /** Bumped to ask the Peers view to open its create form (the palette does). */
  peerFormRequest: number;
  requestPeerForm(): void;
  /**
   * Re-reads the peers. `firstLook`: the page's first read, sent before the event stream has
   * synced; its answer only fills a list nothing else has filled yet (app-store.ts `start`).
   */
  refreshPeers(options?: { firstLook?: boolean }): Promise<void>;
  peerAction(id: string, action: PeerAction): Promise<boolean>;
  createPeer(request: CommandRequest<'peers.create'>): Promise<Result<PeerSummary>>;
  callPeer(from: string, to: string, skill: string, args: Record<string, unknown>): Promise<void>;
  allowPeer(callee: string, caller: string, skills: string[]): Promise<Result<PeerSummary>>;
  revokePeer(id: string): Promise<void>;
  refreshSessions(): Promise<void>;
  revokeSession(peerId: string, label: string): Promise<void>;
  /** Opens a session on a running peer and pings with it (peers.ping); the session then shows in Sessions. */
  pingPeer(id: string): Promise<void>;
}

const ACTION_COMMAND = { start: 'peers.start', stop: 'peers.stop', restart: 'peers.restart' } as const;
const ACTION_DONE = { start: 'started', stop: 'stopped', restart: 'restarted' } as const;

export function createPeersSlice({ set, get, client, env }: SliceDeps): PeersSlice {
  const upsert = (peer: PeerSummary) =>
    set((s) => ({ peers: s.peers.some((p) => p.id === peer.id) ? s.peers.map((p) => (p.id === peer.id ? peer : p)) : [...s.peers, peer] }));

  return {
    peers: [],
    peersLoaded: false,
    peerBusy: {},
    peerErrors: {},
    peerCalls: {},
    sessions: {},
    sessionBusy: {},
    sessionErrors: {},
    peerPings: {},
    peerFormRequest: 0,

    requestPeerForm() {
      set((s) => ({ peerFormRequest: s.peerFormRequest + 1 }));
    },

    async refreshPeers(options = {}) {
      const result = await client.tryCall('peers.list', {});
      if (options.firstLook && get().peersLoaded) return;
      if (result.ok) set({ peers: result.value.peers, peersLoaded: true });
      else if (!options.firstLook) set({ error: result.error.message });
    },

    async peerAction(id, action) {
      if (get().peerBusy[id]) return false;
      set((s) => ({ peerBusy: { ...s.peerBusy, [id]: action }, peerErrors: { ...s.peerErrors, [id]: undefined } }));
      const result = await client.tryCall(ACTION_COMMAND[action], { id });
      set((s) => ({ peerBusy: { ...s.peerBusy, [id]: undefined } }));
      if (result.ok) {
        upsert(result.value);
        get().announce(`Peer ${id} ${ACTION_DONE[action]}.`);
        if (action !== 'stop') void get().refreshSessions();
        return true;
      }
      const message = peerErrorText(result.error);
      set((s) => ({ peerErrors: { ...s.peerErrors, [id]: message } }));
      get().announce(`Peer ${id} could not ${action}: ${message}`);
      void get().refreshPeers();
      return false;
    },

    async createPeer(request) {
      const result = await client.tryCall('peers.create', request);
      if (result.ok) {
        upsert(result.value);
        get().announce(`Peer ${result.value.id} created.`);
      }
      return result;
    },

    async callPeer(from, to, skill, args) {
      const key = `${from}/${skill}`;
      set((s) => ({ peerCalls: { ...s.peerCalls, [key]: { busy: true, to } } }));
      const result = await client.tryCall('peers.call', { from, to, skill, arguments: args });
      const at = env.now();
      set((s) => ({
        peerCalls: {
          ...s.peerCalls,
          [key]: result.ok ? { busy: false, to, result: result.value.result, at } : { busy: false, to, error: result.error.message, at },
        },
      }));
      // The call was admitted as a run on the callee, written by the callee's process: it
      // arrives with the journal tail (the plane notices foreign appends within half a second).
    },

    async allowPeer(callee, caller, skills) {
      const result = await client.tryCall('peers.allow', { callee, caller, skills });
      if (result.ok) upsert(result.value);
      return result;
    },

    async revokePeer(id) {
      const result = await client.tryCall('peers.revoke', { id });
      if (result.ok) {
        upsert(result.value);
        get().announce(`Peer ${id} revoked.`);
      } else set((s) => ({ peerErrors: { ...s.peerErrors, [id]: result.error.message } }));
    },

    async refreshSessions() {
      const running = get().peers.filter((p) => p.status === 'running');
      const entries = await Promise.all(
        running.map(async (peer) => {
          const result = await client.tryCall('peers.sessions', { id: peer.id });
          const entry: SessionsEntry = result.ok
            ? { rows: result.value.sessions, identities: result.value.identities, error: null, loadedAt: env.now() }
            : { rows: [], identities: [], error: result.error.message, loadedAt: env.now() };
          return [peer.id, entry] as const;
        }),
      );
      set({ sessions: Object.fromEntries(entries) });
    },

    async revokeSession(peerId, label) {
      const key = `${peerId}/${label}`;
      set((s) => ({ sessionBusy: { ...s.sessionBusy, [key]: true }, sessionErrors: { ...s.sessionErrors, [key]: undefined } }));
      const result = await client.tryCall('peers.revokeSession', { id: peerId, label });
      set((s) => ({ sessionBusy: { ...s.sessionBusy, [key]: false } }));
      if (!result.ok) {
        set((s) => ({ sessionErrors: { ...s.sessionErrors, [key]: result.error.message } }));
        return;
      }
      get().announce(result.value.revoked ? `Session ${label} revoked.` : `Session ${label} was already gone.`);
      await get().refreshSessions();
    },

    async pingPeer(id) {
      set((s) => ({ peerPings: { ...s.peerPings, [id]: { busy: true } } }));
      const result = await client.tryCall('peers.ping', { id });
      set((s) => ({ peerPings: { ...s.peerPings, [id]: result.ok ? { busy: false, result: result.value } : { busy: false, error: result.error.message } } }));
      if (!result.ok) return;
      get().announce(`Pinged ${id} in ${result.value.latencyMs} ms with session ${result.value.label}.`);
      await get().refreshSessions();
    },
  };
}
