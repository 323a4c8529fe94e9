import { describe, expect, it } from 'vitest';
import { EventHub } from './event-hub';

const peers = { peers: [] };

describe('EventHub', () => {
  it('delivers each event, as published, to every subscriber until it unsubscribes', () => {
    const hub = new EventHub();
    const seen: string[] = [];
    const unsubscribe = hub.subscribe((e) => seen.push(e.name));
    hub.publish('peers.changed', peers);
    hub.publish('journal.appended', { fromSeq: 1, seq: 3, runs: [] });
    unsubscribe();
    hub.publish('peers.changed', peers);
    expect(seen).toEqual(['peers.changed', 'journal.appended']);
  });

  it('carries no sequence of its own: the journal seq is the only cursor', () => {
    const hub = new EventHub();
    const seen: unknown[] = [];
    hub.subscribe((e) => seen.push(e));
    hub.publish('peers.changed', peers);
    expect(seen).toEqual([{ name: 'peers.changed', payload: peers }]);
  });

  it('a throwing subscriber does not stop delivery to the others', () => {
    const hub = new EventHub();
    const seen: string[] = [];
    hub.subscribe(() => {
      throw new Error('broken socket');
    });
    hub.subscribe((e) => seen.push(e.name));
    hub.publish('peers.changed', peers);
    expect(seen).toEqual(['peers.changed']);
  });
});
