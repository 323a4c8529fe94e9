/**
 * The transcript store: what people read of an observed ACP session (message and thought
 * chunks, plans, mode changes, command lists) kept beside the journal, not in it
 * (docs/GOVERNED-RUNTIME.md, "Observing an agent you do not run"). It lives in this folder only
 * because it is opened the journal's way (a private file, WAL, the Electron build of
 * better-sqlite3); nothing in it is chained, signed, exported or verified, and the journal never
 * depends on it: the journal names what it left out, so a session whose transcript is gone
 * still says how much conversation there was.
 *
 * `transcripts.sqlite` in the data dir, one row per presentation message: (run id, wire index)
 * is the key, so writing a line twice (a retried write, the plane and the tap's fallback both
 * writing one batch) keeps one. Unlike the journal, rows go: the operator sets how many days
 * they are kept (`retention_days`, default DEFAULT_RETENTION_DAYS), applied at open and then at
 * most once an hour on write, and can erase a session's transcript at any time.
 *
 * Several processes may write it (the plane, a tap writing without a plane): SQLite's WAL and a
 * busy timeout serialise them, as for the journal.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { TranscriptLine } from '../../src-shared/protocol/acp/evidence';
import { JournalError } from './journal-error';
import { nativeBinding } from './sqlite-reader';
import { preparePrivateFiles, switchToWal } from './sqlite-store';

export const DEFAULT_RETENTION_DAYS = 30;
export const MAX_RETENTION_DAYS = 3650;
const SWEEP_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Ordered, named migrations (docs/STYLE.md 9), each run once inside a transaction. */
export const transcriptMigrations: ReadonlyArray<{ id: string; sql: string }> = [
  {
    id: '001_transcript_lines',
    sql: `
      CREATE TABLE transcript_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
      CREATE TABLE transcript_lines (
        run_id     TEXT NOT NULL,
        wire       INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        at         TEXT NOT NULL,
        dir        TEXT NOT NULL,
        kind       TEXT NOT NULL,
        message    TEXT NOT NULL,
        PRIMARY KEY (run_id, wire)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX transcript_by_session ON transcript_lines (session_id);
      CREATE INDEX transcript_by_time ON transcript_lines (at);
    `,
  },
];

export function transcriptPath(dataDir: string): string {
  return join(dataDir, 'transcripts.sqlite');
}

export interface TranscriptStat {
  lines: number;
  lastWire: number;
}

export class TranscriptStore {
  private lastSweepMs = 0;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  static open(dataDir: string, options: { now?: () => number } = {}): TranscriptStore {
    const path = transcriptPath(dataDir);
    preparePrivateFiles(path);
    const binding = nativeBinding();
    let db: Database.Database;
    try {
      db = new Database(path, binding ? { nativeBinding: binding } : {});
      db.pragma('busy_timeout = 10000');
      switchToWal(db, 10_000);
      db.pragma('synchronous = NORMAL');
      migrateTranscripts(db);
      preparePrivateFiles(path);
    } catch (error) {
      throw new JournalError('Io', `${path} cannot be opened as the transcript store: ${(error as Error).message}`);
    }
    const store = new TranscriptStore(db, options.now ?? Date.now);
    store.sweep();
    return store;
  }

  /** Writes a run's lines (a line already held is kept as it is); returns how many were new. */
  append(runId: string, sessionId: string, lines: readonly TranscriptLine[]): number {
    this.assertOpen();
    if (this.now() - this.lastSweepMs >= SWEEP_EVERY_MS) this.sweep();
    const insert = this.db.prepare('INSERT OR IGNORE INTO transcript_lines (run_id, wire, session_id, at, dir, kind, message) VALUES (?, ?, ?, ?, ?, ?, ?)');
    let added = 0;
    this.db.transaction(() => {
      for (const l of lines) added += insert.run(runId, l.wire, sessionId, l.at, l.dir, l.kind, JSON.stringify(l.message ?? null)).changes;
    })();
    return added;
  }

  /** A run's lines after `afterWire`, in wire order. */
  lines(runId: string, afterWire = 0): TranscriptLine[] {
    this.assertOpen();
    const rows = this.db.prepare('SELECT wire, dir, at, kind, message FROM transcript_lines WHERE run_id = ? AND wire > ? ORDER BY wire').all(runId, afterWire) as Array<Omit<TranscriptLine, 'message'> & { message: string }>;
    return rows.map((r) => ({ wire: r.wire, dir: r.dir, at: r.at, kind: r.kind, message: JSON.parse(r.message) as unknown }));
  }

  /** How many lines a run holds and its last wire index (0 when none). */
  stat(runId: string): TranscriptStat {
    this.assertOpen();
    const row = this.db.prepare('SELECT count(*) AS lines, coalesce(max(wire), 0) AS lastWire FROM transcript_lines WHERE run_id = ?').get(runId) as TranscriptStat;
    return row;
  }

  /** Erases every line of an ACP session (all its runs); returns the runs it touched and the lines gone. */
  eraseSession(sessionId: string): { runIds: string[]; lines: number } {
    this.assertOpen();
    const runIds = this.db.prepare('SELECT DISTINCT run_id FROM transcript_lines WHERE session_id = ?').pluck().all(sessionId) as string[];
    const lines = this.db.prepare('DELETE FROM transcript_lines WHERE session_id = ?').run(sessionId).changes;
    return { runIds, lines };
  }

  retentionDays(): number {
    this.assertOpen();
    const value = this.db.prepare("SELECT value FROM transcript_meta WHERE key = 'retention_days'").pluck().get() as string | undefined;
    const days = value === undefined ? NaN : Number(value);
    return Number.isInteger(days) && days >= 1 ? days : DEFAULT_RETENTION_DAYS;
  }

  /** Sets the retention and applies it at once; returns the lines it removed. */
  setRetentionDays(days: number): number {
    this.assertOpen();
    if (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) throw new JournalError('Refused', `retention must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, not ${days}`);
    this.db.prepare("INSERT INTO transcript_meta (key, value) VALUES ('retention_days', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(days));
    return this.sweep();
  }

  /** Removes the lines older than the retention; returns how many. */
  sweep(): number {
    this.assertOpen();
    this.lastSweepMs = this.now();
    const cutoff = new Date(this.now() - this.retentionDays() * DAY_MS).toISOString();
    return this.db.prepare('DELETE FROM transcript_lines WHERE at < ?').run(cutoff).changes;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new JournalError('Closed', 'the transcript store is closed');
  }
}

function migrateTranscripts(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT');
  const applied = new Set(db.prepare('SELECT id FROM schema_migrations').pluck().all() as string[]);
  const known = new Set(transcriptMigrations.map((m) => m.id));
  const newer = [...applied].filter((id) => !known.has(id));
  if (newer.length > 0) throw new Error(`it was written by a newer AgentPlane (migrations ${newer.join(', ')})`);
  for (const migration of transcriptMigrations) {
    if (applied.has(migration.id)) continue;
    db.transaction(() => {
      // Another process may have applied it meanwhile: checked again under the write lock.
      if (db.prepare('SELECT 1 FROM schema_migrations WHERE id = ?').get(migration.id)) return;
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)').run(migration.id, new Date().toISOString());
    }).immediate();
  }
}
