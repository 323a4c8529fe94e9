/**
 * The plane's live notifications, fanned out to every connected client (Electron IPC, the web
 * bridge's WebSocket, `serveContract` ports). The hub keeps no sequence and no history of its
 * own: the journal is the one account of what happened and its seq the one cursor, so
 * `journal.appended` carries journal seqs and a client that missed some asks
 * `journal.changes`; the other events are whole snapshots that a reconnecting client re-reads.
 */
import type { EventName, EventPayload, PlaneEvent } from '../../src-shared/ipc/contract';

export type EventListener = (event: PlaneEvent) => void;

export class EventHub {
  private readonly listeners = new Set<EventListener>();

  publish<K extends EventName>(name: K, payload: EventPayload<K>): void {
    const event = { name, payload } as PlaneEvent;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A broken subscriber (a closed socket mid-send) must not stop delivery to the rest.
      }
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
