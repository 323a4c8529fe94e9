/**
 * The per-session event store that makes a 2025-11-25 SSE stream resumable (SEP-1699): the
 * transport stores every event it sends with an id, and a client that lost the stream
 * reconnects with `Last-Event-ID` and is sent what came after it.
 *
 * It lives in memory and dies with its session: a resumption is a reconnect to a live session,
 * and a session does not survive the plane. It is bounded (the oldest events go first), so a
 * session that streams for hours does not grow without limit; a client that comes back after
 * more than `maxEvents` events missed the ones dropped, which is the same answer as a stream
 * that was never stored.
 */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';

export class SessionEventStore implements EventStore {
  private readonly events = new Map<EventId, { streamId: StreamId; message: JSONRPCMessage }>();
  private next = 0;

  constructor(private readonly maxEvents = 1000) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    // The stream id leads so an id alone names its stream; the counter keeps ids unique and ordered.
    const id = `${streamId}_${++this.next}`;
    this.events.set(id, { streamId, message });
    if (this.events.size > this.maxEvents) {
      const oldest = this.events.keys().next();
      if (!oldest.done) this.events.delete(oldest.value);
    }
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const streamId = this.events.get(lastEventId)?.streamId ?? lastEventId.slice(0, lastEventId.lastIndexOf('_'));
    let after = false;
    for (const [id, event] of this.events) {
      if (id === lastEventId) {
        after = true;
        continue;
      }
      if (after && event.streamId === streamId) await send(id, event.message);
    }
    return streamId;
  }
}
