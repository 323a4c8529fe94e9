/**
 * `agentplane cases …` and `agentplane audit`: binding observed ACP sessions to a case (a
 * matter) and listing what the plane admitted beside what it only observed
 * (src-shared/protocol/acp/cases.ts; the plane's side is plane/case-handlers.ts). Like every
 * command, through the running plane when there is one, else the data dir opened in-process.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { CaseIdSchema } from '../../src-shared/protocol/acp/cases';
import { CommandFailed } from './cli-error';
import { runAndPrint, type OutputOptions } from './plane-connection';

const out = (line: string) => process.stdout.write(`${line}\n`);

function limitOf(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1000) throw new InvalidArgumentError('a whole number from 1 to 1000');
  return n;
}

/** A case id as typed, or a refusal naming what is wrong with it. */
function caseIdOf(value: string): string {
  const parsed = CaseIdSchema.safeParse(value);
  if (!parsed.success) throw new CommandFailed(ErrorCode.BadRequest, `"${value}" is not a case id: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

export function addCaseCommands(program: Command): void {
  const cases = program.command('cases').description('bind observed editor sessions to a case (a matter), by their ACP session id');
  cases
    .command('bind')
    .argument('<case>', 'the case id (letters, digits, ".", "_", ":" or "-")')
    .requiredOption('--session <sessionId>', 'the ACP session id (from `acp sessions --json` or `acp show`)')
    .option('--note <text>', 'a note kept with the binding (at most 500 characters)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .description('journal that a session belongs to a case')
    .action((caseArg: string, options: OutputOptions & { session: string; note?: string }) => {
      const caseId = caseIdOf(caseArg);
      if (options.session.trim() === '') throw new CommandFailed(ErrorCode.BadRequest, '--session needs an ACP session id, not an empty string');
      if (options.note !== undefined && options.note.length > 500) throw new CommandFailed(ErrorCode.BadRequest, `--note is ${options.note.length} characters; at most 500`);
      return runAndPrint(options, out, (p) => p.call('cases.bind', { caseId, sessionId: options.session, ...(options.note !== undefined ? { note: options.note } : {}) }), (b) =>
        out(`bound session ${b.sessionId} (runs ${b.runIds.join(', ')}) to case ${b.caseId} at seq ${b.seq}`),
      );
    });
  cases
    .command('list')
    .description('every case with a binding, the most recently bound first')
    .option('--limit <n>', 'how many', limitOf, 200)
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { limit: number }) =>
      runAndPrint(options, out, (p) => p.call('cases.list', { limit: options.limit }), ({ cases: rows }) => {
        if (rows.length === 0) out('no cases yet: bind a session with `agentplane cases bind <case> --session <sessionId>`');
        for (const c of rows) out(`${c.caseId}  ${c.sessions} session${c.sessions === 1 ? '' : 's'}  last bound ${c.lastAt} (seq ${c.lastSeq})`);
      }),
    );
  cases
    .command('show')
    .argument('<case>', 'the case id')
    .description("one case's bindings, in the order they were journaled")
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((caseArg: string, options: OutputOptions) => {
      const caseId = caseIdOf(caseArg);
      return runAndPrint(options, out, (p) => p.call('cases.show', { caseId }), (c) => {
        out(`case ${c.caseId}`);
        for (const b of c.bindings) out(`  session ${b.sessionId}  runs ${b.runIds.join(', ')}  bound by ${b.by} at ${b.at} (seq ${b.seq})${b.note ? `: ${b.note}` : ''}`);
      });
    });
  program
    .command('audit')
    .description('runs the plane admitted, counted, and the observed runs nothing admitted, listed as unadmitted')
    .option('--limit <n>', 'read the newest this many runs', limitOf, 200)
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { limit: number }) =>
      runAndPrint(options, out, (p) => p.call('audit.runs', { limit: options.limit }), (a) => {
        out(`admitted runs: ${a.admitted.runs} (${a.admitted.sealed} sealed)`);
        out(`observed runs, unadmitted: ${a.unadmitted.length}`);
        for (const r of a.unadmitted) out(`  ${r.runId}  ${r.admission}  session ${r.sessionId || '(none opened)'}  ${r.sealed ? 'sealed' : 'open'}  ${r.records} records${r.cases.length ? `  cases ${r.cases.join(', ')}` : ''}`);
      }),
    );
}
