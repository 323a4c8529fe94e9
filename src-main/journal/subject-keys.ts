/**
 * The subject key store (docs/ERASURE.md): the data keys payloads are sealed under, one per
 * (subject, UTC month), beside the journal in `<data dir>/subject-keys.db`, never in it. The
 * journal is append-only and can forget nothing; this file is where forgetting happens, so it
 * is made to really forget:
 * - `secure_delete = ON`: SQLite overwrites a deleted row's bytes with zeros in the file itself,
 *   rather than leaving them on a free page;
 * - `journal_mode = DELETE`, not WAL: a WAL would keep the key's page in `-wal` after the
 *   delete commits, until a checkpoint; a rollback journal holds pages only for the length of a
 *   transaction and is removed at its commit.
 * It also keeps the data dir's erasure settings (whether new payloads are sealed, the retention
 * in days), the legal holds in force, and a tombstone per destroyed key (who erased it, when,
 * why, the SubjectErased seq): a reader meeting a payload under that key says so.
 *
 * On a team plane (PostgreSQL) the keys would have to be shared by every instance; this store is
 * one file of one data dir, so a journal at a database URL does not seal (docs/ERASURE.md).
 */
import Database from 'better-sqlite3';
import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { HoldTargetKind } from '../../src-shared/journal/records';
import { JournalError } from './journal-error';
import { nativeBinding } from './sqlite-reader';
import { preparePrivateFiles } from './sqlite-store';

export const SUBJECT_KEYS_FILE = 'subject-keys.db';
export const subjectKeysPath = (dataDir: string): string => join(dataDir, SUBJECT_KEYS_FILE);

export interface Hold {
  holdId: string;
  target: { kind: HoldTargetKind; id: string };
  by: string;
  reason?: string;
  at: string;
  seq: number;
}
export interface Tombstone {
  at: string;
  by: string;
  reason: string;
  seq: number;
}
export interface KeyRow {
  key: string;
  subject: string;
  period: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS keys (id TEXT PRIMARY KEY, subject TEXT NOT NULL, period TEXT NOT NULL, key BLOB NOT NULL, created TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS keys_by_subject ON keys (subject, period);
CREATE TABLE IF NOT EXISTS tombstones (id TEXT PRIMARY KEY, subject TEXT NOT NULL, period TEXT NOT NULL, at TEXT NOT NULL, by TEXT NOT NULL, reason TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS holds (id TEXT PRIMARY KEY, kind TEXT NOT NULL, target TEXT NOT NULL, by TEXT NOT NULL, reason TEXT, at TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

export class SubjectKeys {
  /** Keys read or made by this process, by id. Dropped at destroy, so this process forgets them too. */
  private readonly byId = new Map<string, Buffer>();
  /** The key id serving (subject, period), by `subject\0period`. */
  private readonly current = new Map<string, string>();
  /** The keys this process seals with, as KeyObjects, by id. */
  private readonly keyObjects = new Map<string, KeyObject>();

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
    readonly readOnly: boolean,
  ) {}

  /** Opens (or, unless readOnly, creates) the data dir's key store; null when readOnly and there is none. */
  static open(dataDir: string, options: { readOnly?: boolean } = {}): SubjectKeys | null {
    const path = subjectKeysPath(dataDir);
    if (options.readOnly && !existsSync(path)) return null;
    if (!options.readOnly) preparePrivateFiles(path);
    const binding = nativeBinding();
    let db: Database.Database;
    try {
      db = new Database(path, { ...(options.readOnly ? { readonly: true } : {}), ...(binding ? { nativeBinding: binding } : {}) });
    } catch (error) {
      throw new JournalError('Io', `${path} cannot be opened as the subject key store: ${(error as Error).message}`);
    }
    try {
      db.pragma('busy_timeout = 10000');
      db.pragma('secure_delete = ON');
      if (!options.readOnly) {
        const mode = String(db.pragma('journal_mode = DELETE', { simple: true })).toLowerCase();
        if (mode !== 'delete') throw new JournalError('Io', `${path}: SQLite refused journal_mode=DELETE (got ${mode})`);
        // FULL: a destroyed key's delete is on disk when erase answers.
        db.pragma('synchronous = FULL');
        db.exec(SCHEMA);
      }
      return new SubjectKeys(db, path, options.readOnly ?? false);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  setting(name: string): string | null {
    const row = this.db.prepare('SELECT value FROM settings WHERE name = ?').get(name) as { value: string } | undefined;
    return row?.value ?? null;
  }

  setSetting(name: string, value: string | null): void {
    if (value === null) this.db.prepare('DELETE FROM settings WHERE name = ?').run(name);
    else this.db.prepare('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(name, value);
  }

  /** The key serving (subject, period), made now (32 random bytes) if there is none; as a KeyObject, which encrypts faster than raw bytes. */
  keyFor(subject: string, period: string): { id: string; keyObject: KeyObject } {
    const slot = `${subject}\0${period}`;
    const known = this.current.get(slot);
    if (known !== undefined) {
      const keyObject = this.keyObjects.get(known);
      if (keyObject) return { id: known, keyObject };
    }
    const id = randomBytes(16).toString('hex');
    const key = randomBytes(32);
    // Another process sharing the data dir may have made it first: its key is the one kept.
    this.db.prepare('INSERT INTO keys (id, subject, period, key, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT (subject, period) DO NOTHING').run(id, subject, period, key, new Date().toISOString());
    const row = this.db.prepare('SELECT id, key FROM keys WHERE subject = ? AND period = ?').get(subject, period) as { id: string; key: Buffer };
    this.current.set(slot, row.id);
    this.byId.set(row.id, row.key);
    const keyObject = createSecretKey(row.key);
    this.keyObjects.set(row.id, keyObject);
    return { id: row.id, keyObject };
  }

  /** A key by its id, or null when this store holds none by that id (destroyed, or never here). */
  keyById(id: string): Buffer | null {
    const cached = this.byId.get(id);
    if (cached) return cached;
    const row = this.db.prepare('SELECT key FROM keys WHERE id = ?').get(id) as { key: Buffer } | undefined;
    if (!row) return null;
    this.byId.set(id, row.key);
    return row.key;
  }

  tombstone(id: string): Tombstone | null {
    return (this.db.prepare('SELECT at, by, reason, seq FROM tombstones WHERE id = ?').get(id) as Tombstone | undefined) ?? null;
  }

  keysOf(subject: string): KeyRow[] {
    return this.db.prepare('SELECT id AS key, subject, period FROM keys WHERE subject = ? ORDER BY period').all(subject) as KeyRow[];
  }

  /** Every key whose month is before `period` (YYYY-MM), oldest first. */
  keysBefore(period: string): KeyRow[] {
    return this.db.prepare('SELECT id AS key, subject, period FROM keys WHERE period < ? ORDER BY period, subject').all(period) as KeyRow[];
  }

  /** Whether a subject ever had a key here (destroyed ones included). */
  knowsSubject(subject: string): boolean {
    return this.db.prepare('SELECT 1 FROM keys WHERE subject = ? UNION ALL SELECT 1 FROM tombstones WHERE subject = ? LIMIT 1').get(subject, subject) !== undefined;
  }

  /**
   * Destroys keys: their rows deleted (secure_delete zeroes the bytes in the file) and a tombstone
   * left for each, in one transaction; this process's copies dropped.
   */
  destroy(keys: readonly KeyRow[], erasure: Tombstone): void {
    const del = this.db.prepare('DELETE FROM keys WHERE id = ?');
    const tomb = this.db.prepare('INSERT OR REPLACE INTO tombstones (id, subject, period, at, by, reason, seq) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const k of keys) {
        del.run(k.key);
        tomb.run(k.key, k.subject, k.period, erasure.at, erasure.by, erasure.reason, erasure.seq);
      }
    })();
    for (const k of keys) {
      const cached = this.byId.get(k.key);
      cached?.fill(0);
      this.byId.delete(k.key);
      this.keyObjects.delete(k.key);
      this.current.delete(`${k.subject}\0${k.period}`);
    }
  }

  holds(): Hold[] {
    const rows = this.db.prepare('SELECT id, kind, target, by, reason, at, seq FROM holds ORDER BY seq').all() as Array<{ id: string; kind: HoldTargetKind; target: string; by: string; reason: string | null; at: string; seq: number }>;
    return rows.map((r) => ({ holdId: r.id, target: { kind: r.kind, id: r.target }, by: r.by, ...(r.reason !== null ? { reason: r.reason } : {}), at: r.at, seq: r.seq }));
  }

  addHold(hold: Hold): void {
    this.db.prepare('INSERT INTO holds (id, kind, target, by, reason, at, seq) VALUES (?, ?, ?, ?, ?, ?, ?)').run(hold.holdId, hold.target.kind, hold.target.id, hold.by, hold.reason ?? null, hold.at, hold.seq);
  }

  removeHold(holdId: string): boolean {
    return this.db.prepare('DELETE FROM holds WHERE id = ?').run(holdId).changes > 0;
  }

  close(): void {
    for (const key of this.byId.values()) key.fill(0);
    this.byId.clear();
    this.keyObjects.clear();
    this.db.close();
  }
}
