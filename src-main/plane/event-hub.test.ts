import { describe, expect, it } from 'vitest';
import { EventHub } from './event-hub';

const peers = { peers: [] };

describe('EventHub', () => {
  it('numbers events from 1 with no gaps and delivers them to subscribers', () => {
    const hub = new EventHub();
    const seen: number[] = [];
    hub.subscribe((e) => seen.push(e.seq));
    for (let i = 0; i < 5; i++) hub.publish('peers.changed', peers);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(hub.latestSeq).toBe(5);
  });

  it('replays what a client missed in its epoch', () => {
    const hub = new EventHub();
    for (let i = 0; i < 5; i++) hub.publish('peers.changed', peers);
    const answer = hub.since(hub.epoch, 2);
    expect(answer.reset).toBe(false);
    expect(answer.events.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(hub.since(hub.epoch, 5).events).toEqual([]);
  });

  it('tells a client from another epoch, or too far behind, to reset', () => {
    const hub = new EventHub(3);
    for (let i = 0; i < 10; i++) hub.publish('peers.changed', peers);
    expect(hub.since('another-plane', 9)).toMatchObject({ reset: true, latestSeq: 10, events: [] });
    expect(hub.since(hub.epoch, 5)).toMatchObject({ reset: true, latestSeq: 10 });
    expect(hub.since(hub.epoch, 7).events.map((e) => e.seq)).toEqual([8, 9, 10]);
    expect(hub.since(hub.epoch, 11)).toMatchObject({ reset: true });
  });

  it('a first connect (no epoch) starts at the latest seq without a reset', () => {
    const hub = new EventHub();
    hub.publish('peers.changed', peers);
    expect(hub.since(null, 0)).toEqual({ epoch: hub.epoch, reset: false, latestSeq: 1, events: [] });
  });

  it('a throwing subscriber does not stop delivery to the others', () => {
    const hub = new EventHub();
    const seen: number[] = [];
    hub.subscribe(() => {
      throw new Error('broken socket');
    });
    hub.subscribe((e) => seen.push(e.seq));
    hub.publish('peers.changed', peers);
    expect(seen).toEqual([1]);
  });
});
