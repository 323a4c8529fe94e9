/**
 * A data dir's journal opened for one CLI command and closed after it (the `journal` commands):
 * a journal's own failure, at open or during the command, is said in one line (CliError).
 */
import { Journal } from '../journal/journal';
import { JournalError } from '../journal/journal-error';
import { databaseOptions, type DatabaseChoice } from '../journal/postgres-url';
import { CliError } from './cli-error';

export async function withJournal<T>(dataDir: string, readOnly: boolean, use: (journal: Journal) => Promise<T>, database?: DatabaseChoice): Promise<T> {
  let journal: Journal;
  try {
    journal = await Journal.open({ dataDir, readOnly, ...databaseOptions(database) });
  } catch (error) {
    if (error instanceof JournalError) throw new CliError(error.message);
    if (error instanceof Error && /has no plane key/.test(error.message)) throw new CliError(error.message);
    throw error;
  }
  try {
    return await use(journal);
  } catch (error) {
    // A journal worker that died, or a journal that closed under the job, is said in one line.
    if (error instanceof JournalError) throw new CliError(error.message);
    throw error;
  } finally {
    await journal.close();
  }
}
