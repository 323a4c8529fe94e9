/**
 * Time travel from the command line (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"):
 * `runs fork`, `runs replay` and `runs diff`, beside the other `runs` commands. Steps are
 * numbered from 0, as the timeline numbers them. With `--json` each prints `{ok, result}`:
 * the new run's view for a fork, the replay report, the diff (`divergesAt`, one entry per step
 * with `fromParent`).
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { DiffStep, Divergence, RunDiff, StepSide, ValueRef } from '../../src-shared/protocol/time-travel';
import { ModelOverrideSchema } from '../../src-shared/protocol/time-travel';
import { tokensOf } from '../../src-shared/vocabulary/spend';
import { runAndPrint } from './plane-connection';
import { common, decideWithLines, describeRun, knownRunId, parseJson, WAITING_EXIT_CODE, type Common } from './runtime-commands';

type Out = (line: string) => void;

interface Changes {
  input?: unknown;
  manifest?: string;
  model?: string;
}

function parseStep(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('a step number (0 for the first step)');
  return Number(value);
}

/** The manifest file's text (YAML or JSON); the plane parses and checks it. */
function readManifest(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function parseModel(value: string): string {
  if (!ModelOverrideSchema.safeParse(value).success) throw new InvalidArgumentError('a model as provider:model, e.g. openai:gpt-4.1-mini');
  return value;
}

const changesOf = (options: Changes) => ({
  ...(options.input !== undefined ? { input: options.input } : {}),
  ...(options.manifest !== undefined ? { manifest: options.manifest } : {}),
  ...(options.model !== undefined ? { model: options.model } : {}),
});

const withChanges = (command: Command) =>
  command
    .option('--input <json>', "the run's input instead of the parent's, as JSON", parseJson)
    .option('--manifest <file>', "the agent's manifest (YAML or JSON) instead of the declared one", readManifest)
    .option('--model <provider:model>', "every model step's provider and model instead of the manifest's", parseModel);

function divergenceWords(divergence: Divergence | null, steps: number): string {
  return divergence ? `diverges at step ${divergence.step} (${divergence.reason}): ${divergence.message}` : `no divergence across ${steps} step${steps === 1 ? '' : 's'}`;
}

function valueWords(value: ValueRef | null): string {
  if (value === null) return '-';
  if (value.value === undefined) return `(${value.size} bytes, sha256 ${value.digest.slice(0, 12)}…)`;
  const text = JSON.stringify(value.value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function sideWords(side: StepSide | null): string {
  if (!side) return '(no such step)';
  const end = side.failed ? `failed ${side.failed.code}` : `→ ${valueWords(side.result)}`;
  return `${side.effect} ${side.name}${side.fromParent ? ' [from parent]' : ''} ${valueWords(side.request)} ${end}`;
}

function stepLines(step: DiffStep): string[] {
  const mark = step.same ? ' ' : '≠';
  if (step.same) return [`${mark} ${String(step.step).padStart(4)}  ${sideWords(step.a)}`];
  return [`${mark} ${String(step.step).padStart(4)}  a: ${sideWords(step.a)}`, `        b: ${sideWords(step.b)}`];
}

function printDiff(diff: RunDiff, out: Out): void {
  for (const [name, run] of [['a', diff.a], ['b', diff.b]] as const) {
    const fork = run.forkOf ? `, fork of ${run.forkOf.runId} at step ${run.forkOf.step}` : '';
    out(`${name}: ${run.runId} ${run.agent} ${run.outcome ?? run.status}, ${run.steps} steps, effects ${run.spend.effects}, tokens ${tokensOf(run.spend)}${fork}`);
  }
  out(`input: ${diff.sameInput ? 'the same' : `a ${valueWords(diff.a.input)}, b ${valueWords(diff.b.input)}`}`);
  out(divergenceWords(diff.divergesAt, diff.steps.length));
  for (const step of diff.steps) for (const line of stepLines(step)) out(line);
  const d = diff.spendDifference;
  out(`spend b − a: effects ${d.effects}, tokens ${d.inputTokens + d.outputTokens + d.reasoningTokens}, cost ${(d.costMicros / 1e6).toFixed(6)}`);
}

/** Adds fork, replay and diff to the program's `runs` command (runtime-commands.ts adds it). */
export function addTimeTravelCommands(program: Command, out: Out = (l) => process.stdout.write(`${l}\n`)): void {
  const runs = program.commands.find((c) => c.name() === 'runs');
  if (!runs) throw new Error('the runs command is added before time travel');
  common(
    withChanges(
      runs
        .command('fork')
        .argument('<runId>', 'the run to fork')
        .requiredOption('--at <step>', 'the first step performed live (0 performs every step; steps before it are taken from the run)', parseStep)
        .option('--wait', `wait until the fork ends or waits for a person (exit ${WAITING_EXIT_CODE} when it waits)`)
        .description("a new run of the same agent: steps before --at answered from the run's record (nothing performed, nothing spent), the rest performed live under today's policy, grants and budgets"),
    ),
  ).action(async (runId: string, options: Common & Changes & { at: number; wait?: boolean }) =>
    runAndPrint(
      options,
      out,
      (p) => p.call('runs.fork', { runId: knownRunId(runId), at: options.at, ...changesOf(options), wait: options.wait ?? false }),
      (run) => {
        out(describeRun(run));
        if (run.forkOf) out(`  fork of ${run.forkOf.runId} at step ${run.forkOf.step}`);
        for (const line of decideWithLines(run, options.dataDir)) out(line);
        if (run.status === 'sealed' && run.result !== undefined) out(`  result: ${JSON.stringify(run.result)}`);
        if (run.error) out(`  error: ${run.error.code}: ${run.error.message}`);
      },
      { exitCodeOf: (run) => (options.wait && run.pending ? WAITING_EXIT_CODE : 0) },
    ),
  );
  common(withChanges(runs.command('replay').argument('<runId>', 'the run to replay').description('replay a run against a changed manifest, input or model, performing nothing: where it would first diverge, and why'))).action(
    async (runId: string, options: Common & Changes) =>
      runAndPrint(
        options,
        out,
        (p) => p.call('runs.replay', { runId: knownRunId(runId), ...changesOf(options) }),
        (report) => {
          out(`${report.runId}: replayed ${report.replayed} of ${report.steps} steps; ${divergenceWords(report.divergesAt, report.steps)}`);
          if (report.expected) out(`  the run did: ${sideWords(report.expected)}`);
          if (report.actual) out(`  the replay would do: ${report.actual.effect} ${report.actual.name} ${valueWords(report.actual.request)}`);
        },
      ),
  );
  common(runs.command('diff').argument('<a>', 'a run').argument('<b>', 'another run').description('two runs step by step: where they part, which steps a fork took from its parent, spend of each and the difference')).action(
    async (a: string, b: string, options: Common) => runAndPrint(options, out, (p) => p.call('runs.diff', { a: knownRunId(a), b: knownRunId(b) }), (diff) => printDiff(diff, out)),
  );
}
