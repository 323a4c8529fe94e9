/**
 * Journal failures with a stable code. `NotAJournal` covers a corrupt or foreign database file,
 * `Refused` a draft the journal will not write (unknown kind, invalid body, a value canonical
 * JSON cannot represent), `Io` a failed commit (disk full, I/O error) after which nothing was
 * acknowledged and the database is unchanged. `WorkerCrashed` is a journal worker (a verify or
 * an export off the event loop, journal-workers.ts) that died while running the job: the job
 * failed and nothing it was doing took effect.
 */
export type JournalErrorCode = 'NotAJournal' | 'NewerJournal' | 'Refused' | 'Io' | 'Closed' | 'WorkerCrashed';

export class JournalError extends Error {
  constructor(
    readonly code: JournalErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'JournalError';
  }
}
