/**
 * The sensitivity labels of the workspace's files (docs/GOVERNED-RUNTIME.md, "Sensitivity"): a
 * file a run wrote keeps the label of what was written into it, so a later `file.read` of it, by
 * any run, answers with at least that label, and a confidential note written today cannot leave
 * tomorrow as a public file read. Kept in `<data dir>/file-labels.db`, outside the workspace, so
 * no run's `file.write` can reach it and lower a label; SQLite, because the plane and a peer
 * process on the same data dir both run the workspace tools, and each label change must not undo
 * another process's. A file changed by hand keeps the label it had: a person's edit lowers
 * nothing, and a label too high is the safe mistake.
 *
 * Opened for each read or write and closed after it: a file tool is an effect, rare beside the
 * journal's appends, and nothing is left open for the plane's or a peer's close to forget.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** The file, in the data dir, holding the workspace files' labels. */
export const FILE_LABELS_FILE = 'file-labels.db';
/** How long a write waits for another process's (ms). */
const BUSY_TIMEOUT_MS = 5_000;

export class FileLabels {
  constructor(private readonly dataDir: string) {}

  private get file(): string {
    return join(this.dataDir, FILE_LABELS_FILE);
  }

  private with<T>(work: (db: Database.Database) => T): T {
    const db = new Database(this.file);
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.exec('CREATE TABLE IF NOT EXISTS file_labels (path TEXT PRIMARY KEY, label TEXT NOT NULL, at TEXT NOT NULL) STRICT');
      return work(db);
    } finally {
      db.close();
    }
  }

  /** The label of the file at `path` (relative to the workspace), or undefined: none stored. */
  get(path: string): string | undefined {
    // A data dir whose runs never wrote a labelled file has no store, and gets none from a read.
    if (!existsSync(this.file)) return undefined;
    return this.with((db) => (db.prepare('SELECT label FROM file_labels WHERE path = ?').get(path) as { label: string } | undefined)?.label);
  }

  /** The file at `path` now holds what was written with `label` (undefined: the lowest, so none is kept). */
  set(path: string, label: string | undefined): void {
    if (label === undefined) {
      if (existsSync(this.file)) this.with((db) => db.prepare('DELETE FROM file_labels WHERE path = ?').run(path));
      return;
    }
    this.with((db) => db.prepare('INSERT INTO file_labels (path, label, at) VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET label = excluded.label, at = excluded.at').run(path, label, new Date().toISOString()));
  }
}
