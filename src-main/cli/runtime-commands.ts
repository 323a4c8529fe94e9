/**
 * The runtime from the command line: agents, runs, approvals, recovery, halts. Every command
 * prints something a person reads, or with `--json` one JSON document a script reads: the
 * command's result, or `{"ok":false,"error":{"code","message"}}` with exit code 1. `run --wait`
 * has one more: a run left waiting for a person exits WAITING_EXIT_CODE (3), neither done nor
 * failed, and says the command that decides it.
 */
import { describeErasure } from '../../src-shared/journal/erased-payload';
import { InvalidArgumentError, type Command } from 'commander';
import type { BrokenAgent, CommandResponse, RunView } from '../../src-shared/ipc/contract';
import { modelCallsOf, modelCallWords } from '../../src-shared/vocabulary/model-refs';
import { RecoveryResolutionSchema, type DecisionValue } from '../../src-shared/vocabulary/decisions';
import { RunStatusSchema, type RunStatus } from '../../src-shared/vocabulary/runs';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { isRunId } from '../../src-shared/vocabulary/ids';
import { tokensOf } from '../../src-shared/vocabulary/spend';
import { CliError, CommandFailed } from './cli-error';
import { runAndPrint, type PlaneConnection } from './plane-connection';

type Out = (line: string) => void;

export interface Common {
  dataDir?: string;
  json?: boolean;
}

export function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`not valid JSON (${(error as Error).message})`);
  }
}

function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('a whole number');
  return Number(value);
}

export function describeRun(run: RunView): string {
  const spend = `effects ${run.spend.effects}, tokens ${tokensOf(run.spend)}, cost ${(run.spend.costMicros / 1e6).toFixed(6)}${run.spend.unaccounted ? ' (+unaccounted)' : ''}`;
  const state = run.status === 'sealed' ? run.outcome : run.pending ? `waiting: ${run.pending.reason}${run.pending.snoozedUntil ? ` (snoozed until ${run.pending.snoozedUntil})` : ''}` : run.status;
  return `${run.runId}  ${run.agent.padEnd(14)} ${String(state).padEnd(18)} ${spend}`;
}

function describeWait(run: RunView): string[] {
  const wait = run.pending;
  if (!wait) return [];
  const asks = wait.subject.kind === 'unrecognized' ? wait.subject.raw : wait.subject;
  // A provenance wait says first where each protected value came from (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks").
  const origins = wait.subject.kind === 'provenance' ? wait.subject.fields.map((f) => `  ${f.field} ${JSON.stringify(f.value)} came from ${f.provenance.join(', ')}${f.via.length ? ` via ${f.via.join(', ')}` : ''}`) : [];
  return [`  waits on ${wait.waitId} since ${wait.since}`, ...origins, `  asks: ${JSON.stringify(asks)}`, `  subject hash ${wait.subjectHash}`];
}

const act = runAndPrint;

/** A broken agent file's field and fix, as one line: `input: the manifest has no input schema: add …`. */
function brokenWords(broken: BrokenAgent): string {
  return `${broken.field !== null ? `${broken.field}: ` : ''}${broken.line !== null && broken.field === null && !broken.problem.includes(`line ${broken.line}`) ? `line ${broken.line}: ` : ''}${broken.problem}`;
}

/** Records read for a run's model calls: a run with more shows the first this many. */
const MAX_RECORDS_READ = 5000;

/**
 * Each model call of a run, one line each: `  model anthropic:claude-sonnet-4-5 →
 * claude-sonnet-4-5-20250929` (the model that answered, when another), or the failure.
 */
export function modelCallLines(records: readonly { kind: string; body: unknown }[]): string[] {
  return modelCallsOf(records).map((call) => `  model ${modelCallWords(call.provider, call.requested, call.answered)}${call.error ? ` · failed: ${call.error}` : ''}`);
}

/**
 * Reads the run's records into `lines` (modelCallLines) for the human output, and answers the
 * run unchanged, so `--json` prints exactly the contract's RunView (and reads nothing more).
 */
async function withModelCalls(plane: PlaneConnection, run: RunView, options: Common, lines: string[]): Promise<RunView> {
  if (options.json) return run;
  const records: { kind: string; body: unknown }[] = [];
  let fromSeq: number | null = 1;
  try {
    while (fromSeq !== null && records.length < MAX_RECORDS_READ) {
      const page: CommandResponse<'journal.records'> = await plane.call('journal.records', { runId: run.runId, fromSeq, limit: 1000 });
      records.push(...page.records);
      fromSeq = page.records.length > 0 ? page.nextSeq : null;
    }
    lines.splice(0, lines.length, ...modelCallLines(records));
  } catch (error) {
    // The run was admitted or read: the command did what was asked, so a failed read of the
    // extra detail is said, not turned into a failure of the command.
    lines.splice(0, lines.length, `  (model calls not shown: ${(error as Error).message.slice(0, 200)})`);
  }
  return run;
}

/**
 * The run id as the plane knows it. An id of the wrong shape names no run, so it is told the
 * same "no run <id>" as an unknown one rather than the contract's schema message.
 */
export function knownRunId(id: string): string {
  if (!isRunId(id)) throw new CommandFailed(ErrorCode.NotFound, `no run ${id}`);
  return id;
}

/**
 * The exit code of `run --wait` when the run is left waiting for a person (an approval, input, a
 * budget ceiling, …): not 0, since the work is not done, and not 1, since nothing failed. A
 * script tells the three apart; `--json` still prints `{"ok":true,"result":<the run>}`.
 */
export const WAITING_EXIT_CODE = 3;

/**
 * What decides the wait a run is left in, as a command to type: `agentplane approvals approve
 * <id>` and its kin, with the `--data-dir` the command was given so it can be pasted as is.
 */
export function decideWithLines(run: RunView, dataDir: string | undefined): string[] {
  const wait = run.pending;
  if (!wait) return [];
  const dd = dataDir ? ` --data-dir ${dataDir}` : '';
  const approve = `agentplane approvals approve ${run.runId}`;
  const deny = `agentplane approvals deny ${run.runId} --reason TEXT${dd}`;
  switch (wait.reason) {
    case 'budget':
      return [`  raise the ceiling with: ${approve} --raise-tokens N${dd} (or --raise-effects, --raise-cost)`, `  or end the run with:    ${deny}`];
    case 'input':
      return [`  answer with: ${approve} --input JSON${dd}`, `  or end it:   ${deny}`];
    case 'permission':
      return [`  answer with: ${approve} --option ID${dd}`];
    case 'recovery':
      return [`  resolve with: agentplane recovery resolve ${run.runId} --as retry|landed|fail${dd}`];
    case 'halt': {
      const scope = wait.subject.kind === 'halt' ? wait.subject.scope : 'SCOPE';
      return [`  withheld by the halt ${scope}: lift it with agentplane halt --lift ${scope}${dd}`];
    }
    default:
      return [`  approve with: ${approve}${dd}`, `  or deny with: ${deny}`];
  }
}

/**
 * A run that `run --wait` saw end without succeeding is a failure of the command (exit 1, and
 * `{ok: false}` under --json); one still running or waiting for a person is not.
 */
export function unsuccessful(run: RunView): { code: string; message: string } | null {
  if (run.status !== 'sealed' || run.outcome === 'succeeded' || run.outcome === 'observed') return null;
  const code = run.error && /^AP_[A-Z_]+$/.test(run.error.code) ? run.error.code : ErrorCode.Conflict;
  return { code, message: `run ${run.runId} ${run.outcome}${run.error ? `: ${run.error.code}: ${run.error.message}` : ''}` };
}

/**
 * The halt that withholds a run of `agent` started from this CLI, which acts as the person at
 * this machine (`user:local`): `agent:<agent>`, or `subject:user:local`. Halts are the person's
 * own decisions (`halt --list` shows them), so naming one tells them nothing they may not know.
 */
function haltOver(scopes: readonly string[], agent: string): string | null {
  return scopes.find((scope) => scope === `agent:${agent}`) ?? scopes.find((scope) => scope === 'subject:user:local') ?? null;
}

/**
 * `run`: runs.start, and for a refusal the runtime answers in its fixed words, the halt behind it
 * when a halt is (asked of the plane right after: the runtime checks halts before policy, so a
 * halt over this run is what refused it), with the command that lifts it.
 */
async function startRun(plane: PlaneConnection, agent: string, options: Common & { input: unknown; wait?: boolean; sensitivity?: string }): Promise<RunView> {
  try {
    return await plane.call('runs.start', { agent, input: options.input, wait: options.wait ?? false, ...(options.sensitivity !== undefined ? { sensitivity: options.sensitivity } : {}) });
  } catch (error) {
    // The runtime's refusal names no rule or halt (a protocol caller learns nothing of policy).
    if (!(error instanceof CommandFailed) || error.code !== ErrorCode.Forbidden) throw error;
    const halt = await plane.call('halts.list', {}).then(({ scopes }) => haltOver(scopes, agent), () => null);
    if (!halt) throw error;
    const dd = options.dataDir ? ` --data-dir ${options.dataDir}` : '';
    throw new CommandFailed(error.code, `${error.message}: the halt ${halt} withholds it; lift it with \`agentplane halt --lift ${halt}${dd}\``);
  }
}

/** The run's pending wait, found by run id or by wait id. */
async function pendingOf(plane: PlaneConnection, id: string): Promise<RunView> {
  const runId = knownRunId(id.split('/')[0]!);
  const run = await plane.call('runs.get', { runId });
  if (!run.pending) throw new CommandFailed('AP_CONFLICT', `run ${runId} is not waiting for a decision (${run.status}${run.outcome ? `, ${run.outcome}` : ''})`);
  if (id.includes('/') && run.pending.waitId !== id) throw new CommandFailed('AP_CONFLICT', `run ${runId} is waiting on ${run.pending.waitId}, not ${id}`);
  return run;
}

export const common = (command: Command) => command.option('--data-dir <dir>', 'data folder').option('--json', 'print JSON for scripts');

export function addRuntimeCommands(program: Command, out: Out = (l) => process.stdout.write(`${l}\n`)): void {
  /** The model-call lines of the run a command printed (filled by withModelCalls; one command per process). */
  const calls: string[] = [];
  const agents = program.command('agents').description('the agents this plane can run');
  common(agents.command('list').description('list declared agents, and the agent files that do not load')).action(async (options: Common) =>
    act(options, out, (p) => p.call('agents.list', {}), ({ agents: list, broken }) => {
      for (const a of list) {
        const grants = a.grants.map((g) => `${g.kind}:${g.name}${g.approve ? ' (approve)' : ''}`).join(', ');
        out(`${a.name.padEnd(14)} ${a.description}`);
        out(`${''.padEnd(14)} grants: ${grants || 'none'}; budget: ${JSON.stringify(a.budget)}`);
      }
      for (const b of broken) {
        out(`${b.name.padEnd(14)} BROKEN: ${b.source}`);
        out(`${''.padEnd(14)} ${brokenWords(b)}`);
      }
    }),
  );
  common(agents.command('reload').description('read <data dir>/agents again now (a running plane also watches it) and say what changed')).action(async (options: Common) => {
    let via: PlaneConnection['via'] = 'running plane';
    await act(
      options,
      out,
      (p) => {
        via = p.via;
        return p.call('agents.reload', {});
      },
      ({ added, changed, removed, broken }) => {
        if (via === 'data dir') out('no plane is running for this data dir: the files were checked, and a plane reads them when it starts');
        if (added.length + changed.length + removed.length === 0) out('no agent changed since the files were last read');
        if (added.length > 0) out(`added: ${added.join(', ')}`);
        if (changed.length > 0) out(`changed: ${changed.join(', ')}`);
        if (removed.length > 0) out(`removed: ${removed.join(', ')}`);
        for (const b of broken) out(`broken: ${b.name} (${b.source}): ${brokenWords(b)}`);
      },
    );
  });

  common(
    program
      .command('run')
      .description('admit a run of an agent')
      .argument('<agent>', 'agent name')
      .option('--input <json>', 'the run input as JSON', parseJson, {})
      .option('--sensitivity <label>', "the input's sensitivity label (one of the plane's labels, default the agent's declared one, else the lowest)")
      .option('--wait', `wait until the run ends or waits for a person; exit 0 when it succeeded, 1 when it failed, was denied, cancelled or halted, ${WAITING_EXIT_CODE} when it waits for a person (the command that decides it is printed)`),
  ).action(async (agent: string, options: Common & { input: unknown; wait?: boolean; sensitivity?: string }) =>
    act(options, out, async (p) => withModelCalls(p, await startRun(p, agent, options), options, calls), (run) => {
      out(describeRun(run));
      for (const line of calls) out(line);
      for (const line of describeWait(run)) out(line);
      if (options.wait) for (const line of decideWithLines(run, options.dataDir)) out(line);
      if (run.status === 'sealed' && run.result !== undefined) out(`  result: ${JSON.stringify(run.result)}`);
      if (run.error) out(`  error: ${run.error.code}: ${run.error.message}`);
    }, { failureOf: (run) => (options.wait ? unsuccessful(run) : null), exitCodeOf: (run) => (options.wait && run.pending ? WAITING_EXIT_CODE : 0) }),
  );

  const runs = program.command('runs').description('runs and their state');
  common(runs.command('list').description('list runs, newest first').option('--status <status>', RunStatusSchema.options.join(' | ')).option('--agent <name>', 'only this agent')).action(
    async (options: Common & { status?: RunStatus; agent?: string }) =>
      act(options, out, (p) => p.call('runs.list', { limit: 200, ...(options.status ? { status: options.status } : {}), ...(options.agent ? { agent: options.agent } : {}) }), ({ runs: list }) => {
        if (list.length === 0) out('no runs');
        for (const run of list) out(describeRun(run));
      }),
  );
  common(runs.command('show').argument('<runId>').description('one run, with its model calls and what it waits on')).action(async (runId: string, options: Common) =>
    act(options, out, async (p) => withModelCalls(p, await p.call('runs.get', { runId: knownRunId(runId) }), options, calls), (run) => {
      out(describeRun(run));
      for (const line of calls) out(line);
      for (const line of describeWait(run)) out(line);
      if (run.erased) out(`  payloads ${describeErasure(run.erased)}`);
      if (run.result !== undefined) out(`  result: ${JSON.stringify(run.result)}`);
      if (run.error) out(`  error: ${run.error.code}: ${run.error.message}`);
    }),
  );
  common(runs.command('cancel').argument('<runId>').option('--reason <text>', 'why').description('cancel a run at its next step')).action(
    async (runId: string, options: Common & { reason?: string }) =>
      act(options, out, (p) => p.call('runs.cancel', { runId: knownRunId(runId), ...(options.reason ? { reason: options.reason } : {}) }), (run) => out(describeRun(run))),
  );

  const approvals = program.command('approvals').description('runs waiting for a person');
  common(approvals.command('list').description('everything waiting: approvals, payments, budget ceilings, input')).action(async (options: Common) =>
    act(options, out, (p) => p.call('approvals.list', {}), ({ waiting }) => {
      if (waiting.length === 0) out('nothing is waiting');
      for (const run of waiting) {
        out(describeRun(run));
        for (const line of describeWait(run)) out(line);
      }
    }),
  );
  common(
    approvals
      .command('approve')
      .argument('<id>', 'run id (or wait id)')
      .description('approve exactly what the run waits on')
      .option('--input <json>', 'the answer, for a run waiting for input', parseJson)
      .option('--raise-tokens <n>', 'new token ceiling, for a run stopped at its budget', parseCount)
      .option('--raise-effects <n>', 'new effect ceiling', parseCount)
      .option('--raise-cost <micros>', 'new cost ceiling in micro-units', parseCount)
      .option('--option <optionId>', "which of the agent's options answers an editor's permission request"),
  ).action(async (id: string, options: Common & { input?: unknown; raiseTokens?: number; raiseEffects?: number; raiseCost?: number; option?: string }) =>
    act(
      options,
      out,
      async (p) => {
        const run = await pendingOf(p, id);
        const wait = run.pending!;
        let value: DecisionValue | undefined;
        if (wait.reason === 'budget') {
          if (options.raiseTokens === undefined && options.raiseEffects === undefined && options.raiseCost === undefined) {
            throw new CliError('this run stopped at its budget ceiling: approve it with --raise-tokens, --raise-effects or --raise-cost');
          }
          value = {
            kind: 'budget',
            budget: {
              ...run.budget,
              ...(options.raiseTokens !== undefined ? { maxTokens: options.raiseTokens } : {}),
              ...(options.raiseEffects !== undefined ? { maxEffects: options.raiseEffects } : {}),
              ...(options.raiseCost !== undefined ? { maxCostMicros: options.raiseCost } : {}),
            },
          };
        } else if (wait.reason === 'input') {
          if (options.input === undefined) throw new CliError('this run waits for input: give it with --input JSON');
          value = { kind: 'input', input: options.input };
        } else if (wait.reason === 'permission') {
          const offered = wait.subject.kind === 'permission' ? wait.subject.options.map((o) => o.optionId) : [];
          if (options.option === undefined) throw new CliError(`this is an editor's permission request: answer it with --option, one of ${offered.join(', ')} (deny cancels it)`);
          value = { kind: 'permission', optionId: options.option };
        }
        return p.call('approvals.decide', { runId: run.runId, waitId: wait.waitId, decision: 'approve', subjectHash: wait.subjectHash, ...(value !== undefined ? { value } : {}) });
      },
      (run) => out(describeRun(run)),
    ),
  );
  common(approvals.command('deny').argument('<id>', 'run id (or wait id)').requiredOption('--reason <text>', 'why, recorded in the journal').description('deny what the run waits on; the run ends denied')).action(
    async (id: string, options: Common & { reason: string }) =>
      act(
        options,
        out,
        async (p) => {
          const run = await pendingOf(p, id);
          return p.call('approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'deny', subjectHash: run.pending!.subjectHash, reason: options.reason });
        },
        (run) => out(describeRun(run)),
      ),
  );
  common(approvals.command('snooze').argument('<id>', 'run id (or wait id)').requiredOption('--for <minutes>', 'ask again after this many minutes', parseCount).description('not now (this is not a deny)')).action(
    async (id: string, options: Common & { for: number }) =>
      act(
        options,
        out,
        async (p) => {
          const run = await pendingOf(p, id);
          const until = new Date(Date.now() + options.for * 60_000).toISOString();
          return p.call('approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'snooze', subjectHash: run.pending!.subjectHash, until });
        },
        (run) => out(describeRun(run)),
      ),
  );

  const recovery = program.command('recovery').description('effects in doubt (the plane stopped while they were in flight)');
  common(recovery.command('list').description('list runs with an effect in doubt')).action(async (options: Common) =>
    act(options, out, (p) => p.call('recovery.list', {}), ({ waiting }) => {
      if (waiting.length === 0) out('nothing is in doubt');
      for (const run of waiting) {
        out(describeRun(run));
        for (const line of describeWait(run)) out(line);
      }
    }),
  );
  common(
    recovery
      .command('resolve')
      .description('say whether the effect in doubt happened: retry it, record it as landed, or end the run')
      .argument('<id>', 'run id')
      .requiredOption('--as <resolution>', 'retry (it did not happen) | landed (it happened) | fail (end the run)')
      .option('--result <json>', 'for landed: what it returned', parseJson)
      .option('--reason <text>', 'why'),
  ).action(async (id: string, options: Common & { as: string; result?: unknown; reason?: string }) =>
    act(
      options,
      out,
      async (p) => {
        const resolution = RecoveryResolutionSchema.safeParse(options.as);
        if (!resolution.success) throw new CliError(`--as is ${RecoveryResolutionSchema.options.join(', ')}`);
        const run = await pendingOf(p, id);
        return p.call('recovery.resolve', {
          runId: run.runId,
          waitId: run.pending!.waitId,
          subjectHash: run.pending!.subjectHash,
          resolution: resolution.data,
          ...(options.result !== undefined ? { result: options.result } : {}),
          ...(options.reason ? { reason: options.reason } : {}),
        });
      },
      (run) => out(describeRun(run)),
    ),
  );

  common(
    program
      .command('halt')
      .description("withhold a subject's (or an agent's) runs, including suspended ones at their next step")
      .option('--scope <scope>', 'subject:<principal> or agent:<name>')
      .option('--lift <scope>', 'undo a halt')
      .option('--reason <text>', 'why')
      .option('--list', 'list active halts'),
  ).action(async (options: Common & { scope?: string; lift?: string; reason?: string; list?: boolean }) => {
    const chosen = [options.scope, options.lift, options.list].filter((x) => x !== undefined).length;
    if (chosen !== 1) throw new CliError('give exactly one of --scope, --lift or --list');
    return act(
      options,
      out,
      (p) =>
        options.list
          ? p.call('halts.list', {})
          : options.lift
            ? p.call('halts.lift', { scope: options.lift })
            : p.call('halts.apply', { scope: options.scope!, ...(options.reason ? { reason: options.reason } : {}) }),
      ({ scopes }) => {
        // --scope and --lift say what they did, then what is in force after it.
        if (options.list) return out(scopes.length === 0 ? 'no halts' : `halted: ${scopes.join(', ')}`);
        if (options.lift) out(`lifted the halt ${options.lift}: its runs may start again, and the runs it withheld go on`);
        else out(`halted ${options.scope}: new runs are refused, and admitted ones (suspended ones included) are withheld at their next step; lift it with agentplane halt --lift ${options.scope}`);
        out(scopes.length === 0 ? 'no halts are in force now' : `halts in force now: ${scopes.join(', ')}`);
      },
    );
  });
}
