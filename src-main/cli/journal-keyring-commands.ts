/**
 * `agentplane journal keys` and `agentplane journal retire-key`: the keyring of a team plane's
 * shared PostgreSQL journal (docs/SECURITY.md, "The keyring of a team plane"). Each instance
 * admits its own key when it first serves the journal (KeyAdmitted); `retire-key` appends a
 * KeyRetired, after which a checkpoint that key signs over the journal as it is from then on is
 * refused by every verifier, while what it signed before stays valid.
 *
 * A SQLite journal is one instance's, and its one key is its keyring: both commands say so and
 * do nothing.
 */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { resolveDataDir } from '../base/app-paths';
import type { Journal } from '../journal/journal';
import { Keyring, KEY_RETIRED, readKeyringRecords, type KeyringEntry } from '../journal/keyring';
import { chooseDatabase, type DatabaseChoice } from '../journal/postgres-url';
import { CliError } from './cli-error';
import { withJournal } from './with-journal';

/** The database a keyring command reads, or the error a SQLite journal gets. */
function sharedDatabase(flag: string | undefined, dataDir: string): DatabaseChoice {
  const database = chooseDatabase(flag, process.env);
  if (!database) {
    throw new CliError(
      `${dataDir} serves a single-instance SQLite journal: its one key is its keyring, and it has no keys to list or retire ` +
        '(a keyring belongs to a PostgreSQL journal several instances share: give --database or AGENTPLANE_DATABASE_URL)',
    );
  }
  return database;
}

async function keyringOf(journal: Journal): Promise<Keyring> {
  const folded = await Keyring.fold(await readKeyringRecords(journal, (await journal.head()).seq));
  if ('failed' in folded) throw new CliError(`the journal's keyring does not read (seq ${folded.failed.seq}: ${folded.failed.reason})`);
  return folded.keyring;
}

/** Why `keyId` may not be retired by this data dir's journal, or null. */
function retirementRefusal(keyring: Keyring, journal: Journal, keyId: string): string | null {
  if (!keyring.has(keyId)) return `key ${keyId} was never admitted to this journal's keyring (agentplane journal keys lists it)`;
  const retired = keyring.retirement(keyId);
  if (retired) return `key ${keyId} is already retired (seq ${retired.seq}, ${retired.time}, by ${retired.by})`;
  if (keyId === journal.key.keyId) {
    return `key ${keyId} is this data dir's own signing key: retiring it would refuse every checkpoint it signs next; retire it from another instance's data dir`;
  }
  return null;
}

function describe(entry: KeyringEntry, own: string): string {
  const retired = entry.retired ? `retired at seq ${entry.retired.seq} (${entry.retired.time}) by ${entry.retired.by}${entry.retired.reason ? `: ${entry.retired.reason}` : ''}` : 'active';
  return `${entry.keyId}${entry.keyId === own ? ' (this data dir)' : ''}  ${retired}  admitted at seq ${entry.admittedSeq} (${entry.admittedTime}) by ${entry.instance}`;
}

function osUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

export function addKeyringCommands(journal: Command, out: (line: string) => void): void {
  journal
    .command('keys')
    .description("list a shared journal's keyring: every admitted key, the instance that admitted it, and whether it is retired")
    .option('--data-dir <dir>', 'data folder')
    .option('--database <url>', 'the PostgreSQL journal (default: $AGENTPLANE_DATABASE_URL)')
    .option('--json', 'print the keyring as JSON')
    .action(async (options: { dataDir?: string; database?: string; json?: boolean }) => {
      const dataDir = resolveDataDir(options.dataDir);
      const database = sharedDatabase(options.database, dataDir);
      await withJournal(
        dataDir,
        true,
        async (j) => {
          const entries = (await keyringOf(j)).entries();
          if (options.json) out(JSON.stringify({ keys: entries.map((e) => ({ ...e, own: e.keyId === j.key.keyId })) }));
          else if (entries.length === 0) out('no key admitted yet (each instance admits its own when it first serves the journal)');
          else for (const entry of entries) out(describe(entry, j.key.keyId));
        },
        database,
      );
    });

  journal
    .command('retire-key')
    .description("retire a key from a shared journal's keyring: its checkpoints over records appended from now on are refused")
    .argument('<keyId>', 'the key id, as `journal keys` lists it')
    .option('--reason <text>', 'why, kept in the KeyRetired record')
    .option('--data-dir <dir>', 'data folder')
    .option('--database <url>', 'the PostgreSQL journal (default: $AGENTPLANE_DATABASE_URL)')
    .option('--json', 'print the result as JSON')
    .action(async (keyId: string, options: { reason?: string; dataDir?: string; database?: string; json?: boolean }) => {
      const dataDir = resolveDataDir(options.dataDir);
      const database = sharedDatabase(options.database, dataDir);
      // Checked on a read-only open first: a refusal writes nothing, not even this data dir's
      // own admission, which a writing open appends when its key is new to the journal.
      await withJournal(
        dataDir,
        true,
        async (j) => {
          const refused = retirementRefusal(await keyringOf(j), j, keyId);
          if (refused) throw new CliError(refused);
        },
        database,
      );
      await withJournal(
        dataDir,
        false,
        async (j) => {
          // Again under the writing open: another instance may have retired it in between.
          const refused = retirementRefusal(await keyringOf(j), j, keyId);
          if (refused) throw new CliError(refused);
          const by = `cli:${osUser()}`;
          const record = await j.append({ runId: null, kind: KEY_RETIRED, body: { keyId, by, ...(options.reason ? { reason: options.reason } : {}) } });
          if (options.json) out(JSON.stringify({ keyId, seq: record.seq, time: record.time, by, ...(options.reason ? { reason: options.reason } : {}) }));
          else out(`retired key ${keyId} at seq ${record.seq}: its checkpoints over ${record.seq} records or more are refused from now on`);
        },
        database,
      );
    });
}
