/**
 * The transcript store (transcript-store.ts): beside the journal, keyed by (run, wire) so a line
 * written twice is kept once, with a retention the operator sets and an erase by session, in a
 * private file with its own named migrations.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptLine } from '../../src-shared/protocol/acp/evidence';
import { tempDataDir } from '../../tests/support/journal-support';
import { DEFAULT_RETENTION_DAYS, TranscriptStore, transcriptMigrations, transcriptPath } from './transcript-store';

const open: TranscriptStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-12-07T10:00:00.000Z');

function openAt(dataDir: string, now: { ms: number }): TranscriptStore {
  const store = TranscriptStore.open(dataDir, { now: () => now.ms });
  open.push(store);
  return store;
}

const line = (wire: number, at: number, text = `chunk ${wire}`): TranscriptLine => ({
  wire,
  dir: 'toEditor',
  at: new Date(at).toISOString(),
  kind: 'agent_message_chunk',
  message: { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } },
});

describe('the transcript store', () => {
  it('keeps a line once, in wire order, in a private file', () => {
    const dataDir = tempDataDir('ap-transcripts-');
    const store = openAt(dataDir, { ms: T0 });
    expect(store.append('run-a', 's', [line(3, T0), line(1, T0)])).toBe(2);
    expect(store.append('run-a', 's', [line(1, T0, 'again'), line(5, T0)])).toBe(1);
    expect(store.lines('run-a').map((l) => [l.wire, (l.message as { params: { update: { content: { text: string } } } }).params.update.content.text])).toEqual([
      [1, 'chunk 1'],
      [3, 'chunk 3'],
      [5, 'chunk 5'],
    ]);
    expect(store.lines('run-a', 3).map((l) => l.wire)).toEqual([5]);
    expect(store.stat('run-a')).toEqual({ lines: 3, lastWire: 5 });
    expect(store.stat('run-none')).toEqual({ lines: 0, lastWire: 0 });
    expect(statSync(transcriptPath(dataDir)).mode & 0o777).toBe(0o600);
  });

  it('erases one session, every run of it, and nothing else', () => {
    const store = openAt(tempDataDir('ap-transcripts-'), { ms: T0 });
    store.append('run-a', 's1', [line(1, T0)]);
    store.append('run-b', 's1', [line(1, T0), line(2, T0)]);
    store.append('run-c', 's2', [line(1, T0)]);
    expect(store.eraseSession('s1')).toEqual({ runIds: ['run-a', 'run-b'], lines: 3 });
    expect(store.eraseSession('s1')).toEqual({ runIds: [], lines: 0 });
    expect(store.stat('run-c')).toEqual({ lines: 1, lastWire: 1 });
  });

  it('keeps lines for the retention the operator sets: applied at once, at open, and hourly on write', () => {
    const dataDir = tempDataDir('ap-transcripts-');
    const now = { ms: T0 };
    const store = openAt(dataDir, now);
    expect(store.retentionDays()).toBe(DEFAULT_RETENTION_DAYS);
    store.append('run-a', 's', [line(1, T0 - 40 * DAY), line(2, T0 - 10 * DAY), line(3, T0 - DAY)]);
    // Written past the default retention, it goes at the next hourly sweep.
    now.ms += 61 * 60 * 1000;
    store.append('run-a', 's', [line(4, now.ms)]);
    expect(store.lines('run-a').map((l) => l.wire)).toEqual([2, 3, 4]);
    expect(store.setRetentionDays(5)).toBe(1);
    expect(store.lines('run-a').map((l) => l.wire)).toEqual([3, 4]);
    expect(() => store.setRetentionDays(0)).toThrow(/whole number of days from 1 to 3650, not 0/);
    store.close();
    // Kept across opens, and applied when the store opens four days on.
    now.ms += 4 * DAY;
    const again = openAt(dataDir, now);
    expect(again.retentionDays()).toBe(5);
    expect(again.lines('run-a').map((l) => l.wire)).toEqual([4]);
  });

  it('runs its named migrations once, and refuses a file a newer build migrated', () => {
    const dataDir = tempDataDir('ap-transcripts-');
    openAt(dataDir, { ms: T0 }).close();
    openAt(dataDir, { ms: T0 }).close();
    const raw = new Database(transcriptPath(dataDir));
    try {
      expect(raw.prepare('SELECT id FROM schema_migrations').pluck().all()).toEqual(transcriptMigrations.map((m) => m.id));
      raw.prepare("INSERT INTO schema_migrations (id, applied_at) VALUES ('999_future', 'x')").run();
    } finally {
      raw.close();
    }
    expect(() => TranscriptStore.open(dataDir)).toThrow(/newer AgentPlane \(migrations 999_future\)/);
  });
});
