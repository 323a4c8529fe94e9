/**
 * `agentplane journal export|verify|copy` (`keys` and `retire-key`: journal-keyring-commands.ts).
 * Both open the data dir's journal directly, which is safe beside a running plane: the journal is built for several processes (SQLite's write lock
 * serialises appends, readers never block). `verify` opens it read-only and signs nothing, so
 * verifying never changes what is verified.
 *
 * Output a script can read: `OK <n> records, root <hash>` (exit 0) or
 * `FAIL seq <n>: <reason>` (exit 1); `--json` prints the report as one JSON object instead.
 * `<n>` counts only records a signed checkpoint covers, and `<hash>` is that signed root. A
 * bundle with any record past its newest signed checkpoint fails (`FAIL seq <n>: not covered by
 * a signed checkpoint`). A data dir may hold such records, left by a writer killed before its
 * next checkpoint: they are not counted in the OK line, and a second line names them,
 * `UNSIGNED seq <n>..<m>: …` (exit 0: nothing failed, the next open signs them). A journal with
 * a keyring (a team plane's, keyring.ts) gets a line `keys: <n> signed (<key ids>)`.
 *
 * A data dir's verify and every export run in a journal worker (journal-workers.ts), as they do
 * in the plane, so the CLI exercises the same path; a bundle file is verified in-thread, since
 * it involves no database and the CLI has nothing else to keep answering meanwhile.
 */
import { resolve } from 'node:path';
import { existsSync, lstatSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { resolveDataDir } from '../base/app-paths';
import { BundleError } from '../journal/bundle-error';
import { verifyBundleFile } from '../journal/bundle-verify';
import { exportBundleInWorker, verifyJournalStoreInWorker } from '../journal/journal-workers';
import type { VerifyReport, VerifyScope } from '../journal/verify';
import { copyJournal } from '../journal/journal-copy';
import { checkDatabaseUrl, chooseDatabase } from '../journal/postgres-url';
import { journalPath } from '../journal/sqlite-store';
import { acquirePlaneLock, PlaneRunningError } from '../plane/plane-lock';
import { CliError } from './cli-error';
import { addKeyringCommands } from './journal-keyring-commands';
import { withJournal } from './with-journal';
import { readWitnessKey, witnessCheckOfBundle, witnessCheckOfJournal, type WitnessReport } from '../journal/witness/witness-verify';
import type { NoteKey } from '../journal/witness/signed-note';
import { readFileSync } from 'node:fs';

function parseSeq(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('a seq is a whole number from 1');
  return Number(value);
}

/** A verified report held to the witness check (`--witness-key`, docs/WITNESS.md): its failure fails the whole. */
type CheckedReport = VerifyReport | (VerifyReport & { ok: true; witness: WitnessReport & { ok: true } });

function withWitness(report: VerifyReport, witness: WitnessReport | null): CheckedReport {
  if (!report.ok || witness === null) return report;
  if (!witness.ok) return { ok: false, seq: null, reason: `witness check: ${witness.reason}`, count: report.count };
  return { ...report, witness };
}

function readWitnessKeyFile(file: string): NoteKey {
  let text: string;
  try {
    text = readFileSync(resolve(file), 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the witness key file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return readWitnessKey(text, file);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

function printReport(report: CheckedReport, json: boolean, out: (line: string) => void): void {
  if (json) {
    out(JSON.stringify(report));
  } else if (report.ok) {
    out(`OK ${report.count} records, root ${report.root}`);
    if ('witness' in report) {
      const w = report.witness;
      out(`WITNESS ${w.witness} cosigned tree size ${w.cosignedSize} at ${w.cosignedAt}${w.beyond > 0 ? `; ${w.beyond} records after it are vouched for by the plane's own signature alone` : ''}`);
    }
    if (report.unsignedTail) {
      out(
        `UNSIGNED seq ${report.unsignedTail.fromSeq}..${report.unsignedTail.toSeq}: not covered by a signed checkpoint yet ` +
          '(chained and hashed, but vouched for by no signature); they are signed at the next open of this data dir',
      );
    }
    if (report.keys) out(`keys: ${report.keys.length} signed (${report.keys.join(', ')})`);
    if (report.unknownKinds > 0) out(`note: ${report.unknownKinds} records are of kinds newer than this AgentPlane (verified, shown raw)`);
  } else {
    out(`FAIL ${report.seq === null ? '' : `seq ${report.seq}: `}${report.reason}`);
  }
  if (!report.ok) process.exitCode = 1;
}

/** Whether anything is at `path`, a dangling link included (existsSync follows links). */
function pathExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

export function addJournalCommands(program: Command, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): void {
  const journal = program.command('journal').description('export and verify the run journal');
  addKeyringCommands(journal, out);

  journal
    .command('export')
    .description('write a self-contained, offline-verifiable bundle (everything, one run, or a seq range)')
    .requiredOption('--out <file>', 'bundle file to write')
    .option('--run <id>', 'only this run (with an inclusion proof per record)')
    .option('--from <seq>', 'first seq of a range', parseSeq)
    .option('--to <seq>', 'last seq of a range', parseSeq)
    .option('--force', 'overwrite the --out file when it exists (without it, an existing file is refused)')
    .option('--data-dir <dir>', 'data folder')
    .option('--database <url>', 'the PostgreSQL journal this data dir serves (default: $AGENTPLANE_DATABASE_URL, else its SQLite file)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { out: string; run?: string; from?: number; to?: number; force?: boolean; dataDir?: string; database?: string; json?: boolean }) => {
      if (options.run && (options.from || options.to)) throw new CliError('use --run or --from/--to, not both');
      if ((options.from === undefined) !== (options.to === undefined)) throw new CliError('a range needs both --from and --to');
      const scope: VerifyScope = options.run
        ? { kind: 'run', runId: options.run }
        : options.from !== undefined
          ? { kind: 'range', fromSeq: options.from, toSeq: options.to! }
          : { kind: 'full' };
      const file = resolve(options.out);
      // An earlier bundle is evidence someone may still need: replaced only when asked. Checked
      // before the journal is opened, so a refusal costs nothing and signs nothing.
      if (!options.force && pathExists(file)) throw new CliError(`${file} exists; give --force to overwrite it, or another --out`);
      const dataDir = resolveDataDir(options.dataDir);
      await withJournal(dataDir, false, async (j) => {
        try {
          const result = await exportBundleInWorker(j, scope, file);
          if (options.json) out(JSON.stringify(result));
          else out(`exported ${result.records} records to ${result.file} (anchored at tree size ${result.treeSize}, root ${result.rootHash}, signed by key ${result.keyId})`);
        } catch (error) {
          if (error instanceof BundleError) throw new CliError(error.message);
          throw error;
        }
      }, chooseDatabase(options.database, process.env));
    });

  journal
    .command('verify')
    .description('check a bundle file, or a data dir, offline: chain, hashes, Merkle root, signed checkpoints')
    .argument('[file]', 'a bundle written by `journal export`')
    .option('--data-dir <dir>', 'verify this data dir instead of a file')
    .option('--key-id <id>', "refuse a bundle (or data dir) not signed by this key (the plane's key id)")
    .option('--database <url>', "with --data-dir: verify the PostgreSQL journal it serves against its checkpoints (default: $AGENTPLANE_DATABASE_URL)")
    .option('--witness-key <file>', "also require this witness's cosignature on the records (its witness.vkey; docs/WITNESS.md)")
    .option('--json', 'print the report as JSON')
    .action(async (file: string | undefined, options: { dataDir?: string; keyId?: string; database?: string; witnessKey?: string; json?: boolean }) => {
      if (file && options.dataDir) throw new CliError('give a bundle file or --data-dir, not both');
      const witnessKey = options.witnessKey === undefined ? null : readWitnessKeyFile(options.witnessKey);
      if (file) {
        try {
          const report = await verifyBundleFile(resolve(file), { expectKeyId: options.keyId });
          const witness =
            report.ok && witnessKey
              ? report.header
                ? await witnessCheckOfBundle(resolve(file), report.header, witnessKey, report.count)
                : ({ ok: false, reason: 'the bundle has no header to carry cosignatures' } as const)
              : null;
          printReport(withWitness(report, witness), options.json ?? false, out);
        } catch (error) {
          if (error instanceof BundleError) throw new CliError(error.message);
          throw error;
        }
        return;
      }
      const dataDir = resolve(options.dataDir ?? process.env.AGENTPLANE_DATA_DIR ?? resolveDataDir(undefined));
      if (!existsSync(dataDir)) throw new CliError(`${dataDir} does not exist`);
      await withJournal(
        dataDir,
        true,
        async (j) => {
          const report = await verifyJournalStoreInWorker(j, { expectKeyId: options.keyId });
          const witness = report.ok && witnessKey ? await witnessCheckOfJournal(j, witnessKey, report.count + report.unsigned) : null;
          printReport(withWitness(report, witness), options.json ?? false, out);
        },
        chooseDatabase(options.database, process.env),
      );
    });

  journal
    .command('copy')
    .description("copy this data dir's SQLite journal into a PostgreSQL database (then serve it with --database), verified on both sides")
    .requiredOption('--to <url>', 'the PostgreSQL database: empty, or holding an interrupted copy of this journal')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print the result as JSON')
    .action(async (options: { to: string; dataDir?: string; json?: boolean }) => {
      try {
        checkDatabaseUrl(options.to, '--to');
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      const dataDir = resolveDataDir(options.dataDir);
      if (!existsSync(journalPath(dataDir))) throw new CliError(`${dataDir} holds no SQLite journal to copy (no ${journalPath(dataDir)})`);
      // A plane serving this data dir would append after the copy began: the copy waits for none.
      let lock;
      try {
        lock = acquirePlaneLock(dataDir);
      } catch (error) {
        if (error instanceof PlaneRunningError) throw new CliError(`${error.message}; stop it before copying its journal`);
        throw error;
      }
      try {
        // Opened for writing: records a killed plane left unsigned are signed first, so the copy carries them vouched for.
        await withJournal(dataDir, false, async (j) => {
          const result = await copyJournal(j, options.to);
          if (options.json) out(JSON.stringify({ to: result.to, journalId: result.journalId, copied: result.copied, alreadyThere: result.alreadyThere, records: result.records, root: result.root }));
          else {
            out(`copied ${result.copied} records to ${result.to}${result.alreadyThere > 0 ? ` (${result.alreadyThere} were there already, checked)` : ''}`);
            out(`verified both sides: ${result.records} records, root ${result.root}`);
            out(`serve it with: agentplane serve --data-dir ${dataDir} --database '<the same URL>'`);
          }
        });
      } finally {
        lock.release();
      }
    });
}
