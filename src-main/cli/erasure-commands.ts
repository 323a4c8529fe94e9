/**
 * `agentplane erase`, `holds …`, `retention …` and `sealing …`: crypto-erasure, legal holds and
 * retention (docs/ERASURE.md; src-shared/protocol/erasure.ts, the plane's side
 * plane/erasure-handlers.ts). Like every command, through the running plane when there is one,
 * else the data dir opened in-process.
 */
import type { Command } from 'commander';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { CaseIdSchema } from '../../src-shared/protocol/acp/cases';
import { ErasureReasonSchema, RetentionDaysSchema, SubjectIdSchema, type ErasureView, type HoldView } from '../../src-shared/protocol/erasure';
import { CommandFailed } from './cli-error';
import { runAndPrint, type OutputOptions } from './plane-connection';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** A value checked against its schema, or a refusal naming the option and what is wrong. */
function checked<T>(option: string, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ message: string }> } } }, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new CommandFailed(ErrorCode.BadRequest, `${option} ${JSON.stringify(value)} is refused: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/** `--subject` or `--case`, exactly one, checked. */
function targetOf(options: { subject?: string; case?: string }): { subject: string } | { caseId: string } {
  if ((options.subject === undefined) === (options.case === undefined)) throw new CommandFailed(ErrorCode.BadRequest, 'name exactly one of --subject <id> or --case <id>');
  return options.subject !== undefined ? { subject: checked('--subject', SubjectIdSchema, options.subject) } : { caseId: checked('--case', CaseIdSchema, options.case) };
}

const reasonOf = (reason: string | undefined): { reason?: string } => (reason === undefined ? {} : { reason: checked('--reason', ErasureReasonSchema, reason) });
const holdLine = (h: HoldView) => `${h.holdId}  ${h.target.kind} ${h.target.id}  placed by ${h.by} at ${h.at}${h.reason ? `: ${h.reason}` : ''}`;
const erasureLine = (e: ErasureView) => `erased ${e.subject}: ${e.keys.length} key${e.keys.length === 1 ? '' : 's'} destroyed (${e.keys.map((k) => k.period).join(', ')}) by ${e.by} at ${e.at}, because ${e.reason} (seq ${e.seq})`;

function daysOf(value: string): number {
  if (!/^\d+$/.test(value)) throw new CommandFailed(ErrorCode.BadRequest, `--days "${value}" is refused: a whole number of days from 1 to 36500`);
  return checked('--days', RetentionDaysSchema, Number(value));
}

export function addErasureCommands(program: Command): void {
  program
    .command('erase')
    .description("erase a subject: destroy its data keys, so every payload sealed under them reads as erased (every hash and proof stays valid)")
    .requiredOption('--subject <id>', 'the subject: a run owner, e.g. user:alice')
    .option('--reason <text>', 'why (kept in the journal, at most 500 characters)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { subject: string; reason?: string }) => {
      const subject = checked('--subject', SubjectIdSchema, options.subject);
      return runAndPrint(options, out, (p) => p.call('erasure.erase', { subject, ...reasonOf(options.reason) }), (e) => out(erasureLine(e)));
    });

  const holds = program.command('holds').description('legal holds: a held subject or case cannot be erased, by a person or by retention');
  const holdOptions = (command: Command) =>
    command
      .option('--subject <id>', 'a subject (a run owner)')
      .option('--case <id>', 'a case id (its bound runs’ owners are held)')
      .option('--reason <text>', 'why (kept in the journal)')
      .option('--data-dir <dir>', 'data folder')
      .option('--json', 'print JSON for scripts');
  holdOptions(holds.command('add').description('place a legal hold')).action((options: OutputOptions & { subject?: string; case?: string; reason?: string }) => {
    const target = targetOf(options);
    return runAndPrint(options, out, (p) => p.call('holds.add', { ...target, ...reasonOf(options.reason) }), (h) => out(`placed ${holdLine(h)}`));
  });
  holdOptions(holds.command('remove').description('lift the legal holds on a subject or a case')).action((options: OutputOptions & { subject?: string; case?: string; reason?: string }) => {
    const target = targetOf(options);
    return runAndPrint(options, out, (p) => p.call('holds.remove', { ...target, ...reasonOf(options.reason) }), (r) => {
      for (const h of r.removed) out(`lifted ${holdLine(h)}`);
    });
  });
  holds
    .command('list')
    .description('the legal holds in force')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('holds.list', {}), (r) => {
        if (r.holds.length === 0) out('no legal holds');
        for (const h of r.holds) out(holdLine(h));
      }),
    );

  const retention = program.command('retention').description("erase subjects' payloads once they are older than a number of days, unless held");
  retention
    .command('set')
    .description('set the retention in days (applied now and hourly by the plane)')
    .option('--days <n>', 'whole days, 1 to 36500')
    .option('--off', 'no retention: keep payloads until erased')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { days?: string; off?: boolean }) => {
      if ((options.days === undefined) === (options.off === undefined)) throw new CommandFailed(ErrorCode.BadRequest, 'give --days <n> or --off');
      const retentionDays = options.off ? null : daysOf(options.days!);
      return runAndPrint(options, out, (p) => p.call('erasure.settings', { retentionDays }), (s) =>
        out(s.retentionDays === null ? 'retention off: payloads are kept until erased' : `retention ${s.retentionDays} days`),
      );
    });
  retention
    .command('show')
    .description('the retention in force')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('erasure.settings', {}), (s) => out(s.retentionDays === null ? 'retention off' : `retention ${s.retentionDays} days`)),
    );
  retention
    .command('apply')
    .description('apply retention now')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('erasure.retentionApply', {}), (r) => {
        if (r.days === null) out('retention is off (`agentplane retention set --days <n>`)');
        for (const e of r.erased) out(erasureLine(e));
        for (const h of r.held) out(`kept ${h.subject} (${h.period}): held by ${h.holdId}`);
        if (r.days !== null && r.erased.length === 0 && r.held.length === 0) out('nothing is due');
      }),
    );

  const sealing = program.command('sealing').description("seal new payloads under their subject's data key (needed for erase and retention)");
  for (const [name, on] of [['on', true], ['off', false]] as const) {
    sealing
      .command(name)
      .description(on ? 'seal new payloads' : 'write new payloads clear (payloads already sealed stay sealed)')
      .option('--data-dir <dir>', 'data folder')
      .option('--json', 'print JSON for scripts')
      .action((options: OutputOptions) => runAndPrint(options, out, (p) => p.call('erasure.settings', { sealPayloads: on }), (s) => out(`sealing ${s.sealPayloads ? 'on' : 'off'}`)));
  }
}
