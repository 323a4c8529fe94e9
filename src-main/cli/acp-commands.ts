/**
 * `agentplane acp …`: the Agent Client Protocol side of the CLI. `acp tap -- <agent command>`
 * is what a person points their editor at instead of the agent (protocols/acp/acp-tap.ts does
 * the work). It never opens the data dir as a plane: observations go through the running
 * plane's API, or, when none runs (or it stops answering), straight into the data dir's journal
 * as a peer process writes it, said once on stderr. Its stdout belongs to the editor's protocol,
 * so everything the tap itself has to say goes to stderr.
 *
 * `acp demo` is something to see on a fresh install: the example editor (demo-client.ts) starts
 * `agentplane acp tap` with the example agent (demo-agent.ts) behind it, both written with the
 * official SDK, and runs one scripted coding session through it: a plan, a file read, an edit
 * with a diff, a permission request, a terminal. With `--policy inbox` the example editor leaves
 * the permission request unanswered, so it waits in the plane until a person answers it there.
 *
 * `--record evidence` (the default) journals what carries evidence and keeps the conversation
 * (chunks, thoughts, plans, modes) in the transcript store beside the journal; `--record full`
 * journals every message. `acp transcripts erase|retention` manage that store
 * (src-shared/protocol/acp/evidence.ts, docs/GOVERNED-RUNTIME.md).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { appRoot, appVersion, resolveDataDir } from '../base/app-paths';
import type { DemoPermissionAnswer } from '../protocols/acp/demo/demo-client';
import type { TapPolicy } from '../protocols/acp/acp-tap';
import type { ObservationSink } from '../protocols/acp/observation-sink';
import type { PlaneInbox } from '../protocols/acp/plane-inbox';
import { runningPlaneClient } from './running-plane';
import { CommandFailed } from './cli-error';
import { runAndPrint, type OutputOptions } from './plane-connection';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { isRunId } from '../../src-shared/vocabulary/ids';
import { TapPolicySchema, type SessionSummary, type SessionView } from '../../src-shared/protocol/acp/session-view';
import { DEFAULT_RECORD_MODE, RecordModeSchema, type RecordMode } from '../../src-shared/protocol/acp/evidence';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('a whole number of at least 1');
  return n;
}

/** `--record`: what the journal keeps of a tapped session. */
const recordOption = () =>
  new Option('--record <mode>', 'evidence: journal what carries evidence, keep the conversation as a transcript beside it; full: journal every message').choices(RecordModeSchema.options).default(DEFAULT_RECORD_MODE);

interface TapFlags {
  name?: string;
  policy: TapPolicy;
  record: RecordMode;
  dataDir?: string;
  queueBytes?: number;
  maxLineBytes?: number;
  killGraceMs?: number;
}

export function addAcpCommands(program: Command): Command {
  const acp = program.command('acp').description('Agent Client Protocol: observe the sessions between an editor and its agent');
  acp
    .command('tap')
    .description('run <agent command> as an ACP agent for an editor, forwarding its stdio unchanged and journaling what carries evidence')
    .argument('<command...>', 'the agent command and its arguments (after --)')
    .option('--name <name>', "a name for this tap in the sessions list (default: the agent command's name)")
    .addOption(new Option('--policy <policy>', 'observe: record only; inbox: also put permission requests in the approvals inbox').choices(TapPolicySchema.options).default('observe'))
    .addOption(recordOption())
    .option('--data-dir <dir>', 'data folder (default: $AGENTPLANE_DATA_DIR or the OS user-data folder)')
    .addOption(new Option('--queue-bytes <n>', 'bytes of observations waiting for the journal before a gap').argParser(positiveInt).hideHelp())
    .addOption(new Option('--max-line-bytes <n>', 'a longer line is journaled as digest and size').argParser(positiveInt).hideHelp())
    .addOption(new Option('--kill-grace-ms <n>', "between SIGTERM and SIGKILL of the agent's process group").argParser(positiveInt).hideHelp())
    .action(async (command: string[], flags: TapFlags) => {
      process.exitCode = await tap(command, flags);
    });
  acp
    .command('demo')
    .description('run a scripted coding session between an example editor and an example agent through the tap, to see it in Editor sessions')
    .addOption(new Option('--policy <policy>', 'observe: the example editor answers the permission request; inbox: it waits for an answer in the plane').choices(TapPolicySchema.options).default('observe'))
    .addOption(new Option('--permission <answer>', "the example editor's answer to the permission request (default: allow; wait with --policy inbox)").choices(['allow', 'reject', 'wait']))
    .option('--workspace <dir>', 'the folder the session edits (default: a new temporary folder, seeded with greeting.ts)')
    .addOption(recordOption())
    .option('--data-dir <dir>', 'data folder (default: $AGENTPLANE_DATA_DIR or the OS user-data folder)')
    .action(async (flags: DemoFlags) => {
      process.exitCode = await demo(flags);
    });
  acp
    .command('sessions')
    .description('list the editor sessions observed through the tap, newest first')
    .option('--limit <n>', 'how many', positiveInt, 50)
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { limit: number }) =>
      runAndPrint(options, out, (p) => p.call('acp.sessions', { limit: Math.min(options.limit, 500) }), ({ sessions }) => {
        if (sessions.length === 0) out('no editor sessions observed yet: point an editor at `agentplane acp tap -- <agent command>`, or run `agentplane acp demo`');
        for (const s of sessions) out(`${s.runId}  ${s.state.padEnd(7)}  ${s.tapName}  ${party(s.client)} ↔ ${party(s.agent)}  ${sessionCounts(s)}  since ${s.startedAt}`);
      }),
    );
  acp
    .command('show')
    .argument('<runId>', "the session's run id (from `acp sessions`)")
    .description('one editor session: its parties, state, the conversation, tool calls and permission requests')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((runId: string, options: OutputOptions) => {
      if (!isRunId(runId)) throw new CommandFailed(ErrorCode.NotFound, `no editor session ${runId}`);
      return runAndPrint(options, out, (p) => p.call('acp.session', { runId }), (view) => printSession(view));
    });
  const transcripts = acp.command('transcripts').description('the transcript store: the conversation of sessions recorded as evidence, kept beside the journal, not in it');
  transcripts
    .command('erase')
    .description("erase one session's transcript (its evidence stays in the journal)")
    .requiredOption('--session <sessionId>', 'the ACP session id (from `acp sessions --json` or `acp show`)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { session: string }) =>
      runAndPrint(options, out, (p) => p.call('acp.transcriptErase', { sessionId: options.session }), (r) =>
        out(`erased ${r.lines} transcript line${r.lines === 1 ? '' : 's'} of session ${r.sessionId} (runs ${r.runIds.join(', ') || 'none'}); the journal's evidence is unchanged`),
      ),
    );
  transcripts
    .command('retention')
    .description('show, or set with --days, how many days transcript lines are kept (applied at once)')
    .addOption(new Option('--days <n>', 'keep transcript lines this many days (1 to 3650)').argParser(positiveInt))
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions & { days?: number }) =>
      runAndPrint(options, out, (p) => p.call('acp.transcriptRetention', options.days === undefined ? {} : { days: options.days }), (r) =>
        out(`transcript lines are kept ${r.days} day${r.days === 1 ? '' : 's'}${r.removed > 0 ? `; ${r.removed} older line${r.removed === 1 ? '' : 's'} removed` : ''}`),
      ),
    );
  return acp;
}

const out = (line: string) => process.stdout.write(`${line}\n`);
const party = (p: SessionSummary['client']) => [p.title ?? p.name ?? 'unknown', p.version].filter(Boolean).join(' ');
const sessionCounts = (s: SessionSummary) => `prompts ${s.counts.prompts}, tool calls ${s.counts.toolCalls}, permission requests ${s.counts.permissions}`;
const oneLine = (text: string, max = 160) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function printSession(view: SessionView): void {
  out(`${view.runId}  session ${view.sessionId || '(none opened)'}  ${view.state}  policy ${view.policy}`);
  out(`  editor ${party(view.client)}, agent ${party(view.agent)} via tap ${view.tapName}${view.cwd ? `, in ${view.cwd}` : ''}`);
  out(`  ${sessionCounts(view)}, ${view.counts.messages} messages${view.counts.malformed ? `, ${view.counts.malformed} malformed` : ''}${view.counts.gaps ? `, ${view.counts.gaps} gaps` : ''}`);
  if (view.transcript) {
    const left = Object.entries(view.transcript.leftOut).map(([kind, n]) => `${kind} ${n}`).join(', ') || 'nothing';
    out(`  recorded as evidence: left out of the journal ${left}; transcript, not evidence: ${view.transcript.kept} lines kept ${view.transcript.retentionDays} days`);
  }
  if (view.ended) out(`  ended: ${view.ended.reason}${view.ended.exitCode !== null ? `, exit ${view.ended.exitCode}` : ''}${view.ended.signal ? `, ${view.ended.signal}` : ''}`);
  for (const entry of view.plan) out(`  plan [${entry.status}] ${oneLine(entry.content)}`);
  for (const item of view.conversation) {
    if (item.kind === 'prompt') out(`  you: ${oneLine(item.blocks.map((b) => (b.type === 'text' ? b.text : `[${b.label}]`)).join(' '))}`);
    else if (item.kind === 'message') out(`  agent: ${oneLine(item.text)}`);
    else if (item.kind === 'turnEnd') out(`  turn ended: ${item.stopReason}`);
    else if (item.kind === 'toolCall') {
      const call = view.toolCalls.find((t) => t.toolCallId === item.toolCallId);
      if (call) out(`  tool ${call.toolKind} ${oneLine(call.title, 80)}: ${call.status}${call.locations.length ? ` (${call.locations.map((l) => l.path).join(', ')})` : ''}`);
    } else if (item.kind === 'permission') {
      const asked = view.permissions.find((p) => p.requestKey === item.requestKey);
      if (!asked) continue;
      const answer = asked.outcome ? `${asked.outcome.by} ${asked.outcome.outcome}${asked.outcome.optionId ? ` ${asked.outcome.optionId}` : ''}` : 'waiting';
      out(`  permission for ${asked.toolCall.title ?? asked.toolCall.toolCallId} [${asked.options.map((o) => o.optionId).join(', ')}]: ${answer}`);
    } else if (item.kind === 'unknownUpdate') out(`  (update ${item.update}, unknown to this version)`);
  }
}

interface DemoFlags {
  policy: TapPolicy;
  record: RecordMode;
  permission?: DemoPermissionAnswer;
  workspace?: string;
  dataDir?: string;
}

async function demo(flags: DemoFlags): Promise<number> {
  // The example editor and agent (the ACP SDK), loaded only when the demo runs (program.ts).
  const [{ demoAgentCommand }, { runDemoClient }] = await Promise.all([import('../protocols/acp/demo/demo-agent-command'), import('../protocols/acp/demo/demo-client')]);
  const dataDir = resolveDataDir(flags.dataDir);
  const permission = flags.permission ?? (flags.policy === 'inbox' ? 'wait' : 'allow');
  const workspace = flags.workspace ?? mkdtempSync(join(tmpdir(), 'agentplane-acp-demo-'));
  const tap = [process.execPath, join(appRoot(), 'bin', 'agentplane.js'), 'acp', 'tap', '--name', 'demo-agent', '--policy', flags.policy, '--record', flags.record, '--data-dir', dataDir, '--', ...demoAgentCommand()];
  process.stderr.write(`acp demo: an example editor and agent, through the tap, editing ${workspace}\n`);
  if (permission === 'wait') process.stderr.write('acp demo: the permission request will wait for an answer in the plane (Editor sessions, or Approvals)\n');
  try {
    const result = await runDemoClient({ command: tap, cwd: workspace, permission, version: appVersion() });
    process.stdout.write(`session ${result.sessionId} ended its turn: ${result.stopReason}. It is journaled in ${dataDir}: open Editor sessions in the UI to read it.\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`acp demo: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

async function tap(command: string[], flags: TapFlags): Promise<number> {
  // The tap, its sinks and the inbox, loaded only when a tap runs, not for `acp sessions` (program.ts).
  const [{ startTap }, { FallbackSink, JournalSink, PlaneSink }, { PlaneInbox }] = await Promise.all([
    import('../protocols/acp/acp-tap'),
    import('../protocols/acp/observation-sink'),
    import('../protocols/acp/plane-inbox'),
  ]);
  const say = (message: string) => process.stderr.write(`agentplane acp tap: ${message}\n`);
  const dataDir = resolveDataDir(flags.dataDir);
  // No plane: the tap's worker thread journals into the data dir (acp-tap.ts says why not here).
  let sink: ObservationSink | null = null;
  let inbox: PlaneInbox | null = null;
  try {
    const client = runningPlaneClient(dataDir);
    if (client) {
      sink = new FallbackSink(new PlaneSink(client), new JournalSink(dataDir), say);
      if (flags.policy === 'inbox') inbox = new PlaneInbox(client);
    } else say(`no plane is running for ${dataDir}; writing observations to its journal directly`);
  } catch (error) {
    say(`${(error as Error).message}; writing observations to the journal in ${dataDir} directly`);
  }
  // Answers from the plane need a plane: without one, the editor answers as it always would.
  if (flags.policy === 'inbox' && !inbox) say('--policy inbox needs a running plane: permission requests are observed only, and answered in the editor');

  const running = startTap({
    command,
    tapName: flags.name ?? basename(command[0] ?? 'agent'),
    policy: flags.policy,
    record: flags.record,
    editorIn: process.stdin,
    editorOut: process.stdout,
    editorErr: process.stderr,
    ...(sink ? { sink } : { journalDir: dataDir }),
    notice: say,
    ...(inbox ? { inbox } : {}),
    ...(flags.queueBytes ? { queueBytes: flags.queueBytes } : {}),
    ...(flags.maxLineBytes ? { maxLineBytes: flags.maxLineBytes } : {}),
    ...(flags.killGraceMs ? { killGraceMs: flags.killGraceMs } : {}),
  });
  inbox?.attach(running);
  const stop = () => running.close();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  const result = await running.done;
  inbox?.stop();
  if (result.end.reason === 'agent-exit' && running.agent.pid === undefined) say(result.end.stderrTail);
  // The editor may still hold our stdin open after the agent has gone: the session is over.
  process.stdin.destroy();
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  setImmediate(() => process.exit(result.exitCode)).unref();
  return result.exitCode;
}
