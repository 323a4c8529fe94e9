/**
 * The runtime's time travel (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): forking a run
 * from one of its steps, replaying it dry against a changed manifest, and what a fork takes
 * from its parent when it executes. The diff of two runs is run-diff.ts's.
 *
 * - A fork is a new run of the same agent, for whoever forks it, under today's policy, grants
 *   and budgets. Its RunForked record (committed with its RunAdmitted) names the parent and the
 *   fork step, says what changed, and keeps a changed manifest whole, so the fork runs the same
 *   program after a restart. Each step before the fork step is answered from the parent's record
 *   (EffectReused, pointing at that record's seq and hash): nothing performed, nothing spent.
 *   Reuse stops at the first step that differs from the parent's (run-context.ts), and from the
 *   fork step on everything is live; an outside effect (payment, peer, MCP, A2A) the parent
 *   performed at the same step with the same arguments asks a person before it is performed again.
 * - A dry replay runs the agent's program over the recorded run through a RunContext that
 *   answers every recorded step and performs and writes nothing: it reports the first step
 *   whose effect, arguments or grant differ under the change, or none.
 */
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { RecordBody } from '../../src-shared/journal/records';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { ForkRequest, ReplayReport, ReplayRequest } from '../../src-shared/protocol/time-travel';
import { waitIdParts } from '../../src-shared/vocabulary/ids';
import { OUTSIDE_EFFECTS } from '../../src-shared/vocabulary/effects';
import { PlaneError } from '../base/plane-error';
import { sha256Hex } from '../journal/sqlite-store';
import { compileAgent, ManifestError, parseManifestText, type LoadedAgent } from './manifest';
import { unconfiguredProviderMessage } from './model-provider';
import { RunContext, type ForkReuse, type RunGovernance } from './run-context';
import { decisionOn, type RunHistory } from './run-history';
import { agentProgram, type RunProgram } from './run-program';
import { DivergenceError, EffectFailure, ReplayStop, ReplayUngranted, RunCancelled, RunDenied, RunSuspended } from './run-signals';
import type { StepDeps } from './step-runner';
import { stepSideOf, valueRef, stepsOf } from './run-diff';
import type { RunAdmission, StartRequest } from './runtime-admission';
import type { RunReads } from './runtime-reads';
import type { RuntimeState } from './runtime-state';

/** What a fork (or a replay) changes, compiled: the program to run and the manifest to keep, when the manifest changed. */
interface Effective {
  override: { agent: LoadedAgent; program: RunProgram } | undefined;
  kept: RecordBody<'RunForked'>['manifest'];
}

export class RunForks {
  /** Programs compiled from forks' kept manifests, by digest: a fork resumed runs the program it was admitted with. */
  private readonly compiled = new Map<string, RunProgram>();

  constructor(
    private readonly state: RuntimeState,
    private readonly reads: RunReads,
    private readonly admission: RunAdmission,
    private readonly stepDeps: () => StepDeps,
  ) {}

  /** The program a run executes: a fork's kept manifest, else its agent's declared one. */
  programOf(history: RunHistory): RunProgram | undefined {
    const kept = history.fork?.manifest;
    if (!kept) return this.state.programs.get(history.agent);
    const cached = this.compiled.get(kept.digest);
    if (cached) return cached;
    const program = agentProgram(compileAgent(kept.source, `the manifest kept by fork ${history.runId}`), this.stepDeps());
    this.compiled.set(kept.digest, program);
    return program;
  }

  /**
   * What a fork takes from its parent, read from the parent's folded history (the runtime's cache
   * keeps it: a fork of a long run does not read the parent's records again); undefined for any
   * other run.
   */
  async reuseOf(history: RunHistory): Promise<ForkReuse | undefined> {
    const fork = history.fork;
    if (!fork) return undefined;
    const parent = await this.reads.history(fork.parent);
    const outsideKinds: ReadonlySet<string> = new Set(OUTSIDE_EFFECTS);
    const lastAttempt = (step: number) => parent.steps.get(step)?.at(-1);
    const answerAt = (step: number) => {
      const last = lastAttempt(step);
      return last?.done?.hash ? { key: last.started.key, result: last.done.result, provenance: last.done.provenance, ...(last.done.sensitivity !== undefined ? { sensitivity: last.done.sensitivity } : {}), seq: last.done.seq, hash: last.done.hash } : undefined;
    };
    const outsideAt = (step: number) => {
      const last = lastAttempt(step);
      return last && outsideKinds.has(last.started.effect) ? last.started.key : undefined;
    };
    const inputs = new Map<number, { by: string; input: unknown }>();
    for (const [waitId] of parent.decisions) {
      const wait = waitIdParts(waitId);
      const decision = decisionOn(parent, waitId);
      if (wait?.reason === 'input' && decision?.decision === 'approve' && decision.value?.kind === 'input') inputs.set(wait.step, { by: decision.by, input: decision.value.input });
    }
    return { parentRunId: fork.parent, until: fork.step, answerAt, inputs, outsideAt };
  }

  /** Admits a fork of `request.runId` at step `request.at` for `chain`'s caller. */
  async fork(request: ForkRequest, chain: string[], via: StartRequest['via']): Promise<{ runId: string }> {
    const parent = await this.reads.history(request.runId);
    const steps = stepsOf(parent);
    if (request.at > steps) {
      throw new PlaneError(ErrorCode.BadRequest, `at: run ${parent.runId} has ${steps} step${steps === 1 ? '' : 's'}${steps > 0 ? ` (0 to ${steps - 1})` : ''}; a fork starts at one of them, or at ${steps} to take them all`);
    }
    const effective = this.effective(parent.agent, request);
    const input = request.input !== undefined ? request.input : parent.input;
    const forked: RecordBody<'RunForked'> = {
      parent: parent.runId,
      step: request.at,
      changed: { input: canonicalize(input ?? null) !== canonicalize(parent.input ?? null), manifest: request.manifest !== undefined, model: request.model ?? null },
      ...(effective.kept ? { manifest: effective.kept } : {}),
    };
    return this.admission.admitFork({ agent: parent.agent, input, chain, via }, forked, effective.override);
  }

  /** Replays a recorded run under a change, performing nothing: where it would first diverge. */
  async replay(request: ReplayRequest): Promise<ReplayReport> {
    const recorded = await this.reads.history(request.runId);
    const steps = stepsOf(recorded);
    const { override } = this.effective(recorded.agent, request);
    const program = override?.program ?? this.programOf(recorded);
    if (!program) throw new PlaneError(ErrorCode.NotFound, `agent ${recorded.agent} is no longer declared on this plane; give the manifest to replay against`);
    const governance: RunGovernance = { grants: program.grants, approveEveryEffect: false, sensitivity: this.state.sensitivity, haltedBy: () => null, cancelRequested: () => false };
    const cx = new RunContext(recorded, this.state.journal, governance, undefined, [], undefined, true);
    const input = request.input !== undefined ? request.input : recorded.input;
    const report = (divergesAt: ReplayReport['divergesAt'], extra: Partial<ReplayReport> = {}): ReplayReport => ({ runId: recorded.runId, replayed: Math.min(cx.stepsTaken, steps), steps, divergesAt, expected: null, actual: null, ...extra });
    let result: unknown;
    try {
      result = await program.run(input, cx);
    } catch (error) {
      if (error instanceof DivergenceError) {
        const expected = stepSideOf(recorded, error.step);
        const sameEffect = expected !== null && error.what === `${expected.effect} ${expected.name}`;
        return report(
          { step: error.step, reason: sameEffect ? 'arguments' : 'effect', message: sameEffect ? `step ${error.step} (${error.what}) would be asked with different arguments` : `step ${error.step} would be ${error.what} where the run did ${expected ? `${expected.effect} ${expected.name}` : 'nothing'}` },
          { expected, replayed: error.step },
        );
      }
      if (error instanceof ReplayUngranted) {
        return report({ step: error.step, reason: 'grant', message: `step ${error.step} needs ${error.grant}, which the changed manifest does not grant` }, { expected: stepSideOf(recorded, error.step), replayed: error.step });
      }
      if (error instanceof ReplayStop) {
        // The record ends here: a run that went on (sealed) never did this step; one still going has not yet.
        if (recorded.status !== 'sealed' || error.step < steps) return report(null, { replayed: error.step });
        const actual = error.spec && error.key ? { effect: error.spec.effect, name: error.spec.name, key: error.key, request: valueRef(error.spec.request) } : null;
        return report({ step: error.step, reason: 'missing', message: `the replay would go on to step ${error.step}${actual ? ` (${actual.effect} ${actual.name})` : ''}, which the run never took` }, { actual, replayed: error.step });
      }
      if (error instanceof EffectFailure || error instanceof RunDenied || error instanceof RunCancelled || error instanceof RunSuspended) return this.endedLike(recorded, cx.stepsTaken, report);
      throw error;
    }
    if (cx.stepsTaken < steps) {
      const expected = stepSideOf(recorded, cx.stepsTaken);
      return report({ step: cx.stepsTaken, reason: 'missing', message: `the replay ends before step ${cx.stepsTaken}${expected ? ` (${expected.effect} ${expected.name})` : ''}, which the run took` }, { expected });
    }
    if (recorded.status === 'sealed' && recorded.outcome === 'succeeded' && canonicalize(result ?? null) !== canonicalize(recorded.result ?? null)) {
      return report({ step: steps, reason: 'outcome', message: 'every step replays as recorded, but the run would answer a different result' });
    }
    return report(null);
  }

  /** A replay that ended as recorded runs end (a recorded failure, a denial): no divergence within the steps it took. */
  private endedLike(recorded: RunHistory, taken: number, report: (d: ReplayReport['divergesAt'], extra?: Partial<ReplayReport>) => ReplayReport): ReplayReport {
    return report(null, { replayed: Math.min(taken, stepsOf(recorded)) });
  }

  /** The program a change makes (a manifest given, a model named), checked; none when nothing changes it. */
  private effective(agentName: string, change: { manifest?: string; model?: string }): Effective {
    if (change.manifest === undefined && change.model === undefined) return { override: undefined, kept: undefined };
    let raw: unknown;
    if (change.manifest !== undefined) {
      raw = this.compileOrRefuse(() => parseManifestText(change.manifest!, 'manifest'));
    } else {
      const declared = this.state.agents.get(agentName);
      if (!declared) throw new PlaneError(ErrorCode.NotFound, `agent ${agentName} is not declared on this plane; give its manifest to change its model`);
      raw = JSON.parse(JSON.stringify(declared.manifest)) as unknown;
    }
    if (change.model !== undefined) raw = withModel(raw, change.model);
    const agent = this.compileOrRefuse(() => compileAgent(raw, 'manifest'));
    if (agent.manifest.name !== agentName) throw new PlaneError(ErrorCode.BadRequest, `manifest: names agent ${agent.manifest.name}, but the run is of ${agentName}; a fork runs the same agent`);
    for (const step of agent.manifest.steps) {
      if ('model' in step && !this.state.options.providers.has(step.model.provider)) throw new PlaneError(ErrorCode.BadRequest, unconfiguredProviderMessage(agentName, step.model.provider));
    }
    const source = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
    return { override: { agent, program: agentProgram(agent, this.stepDeps()) }, kept: { digest: sha256Hex(canonicalize(source)), source } };
  }

  private compileOrRefuse<T>(compile: () => T): T {
    try {
      return compile();
    } catch (error) {
      if (error instanceof ManifestError) throw new PlaneError(ErrorCode.BadRequest, error.message);
      throw error;
    }
  }
}

/** Every model step's provider and model set to `provider:model`. */
function withModel(raw: unknown, model: string): unknown {
  const colon = model.indexOf(':');
  const provider = model.slice(0, colon);
  const name = model.slice(colon + 1);
  if (typeof raw !== 'object' || raw === null) return raw;
  const manifest = raw as { steps?: unknown };
  if (!Array.isArray(manifest.steps)) return raw;
  return {
    ...manifest,
    steps: manifest.steps.map((step: unknown) => {
      if (typeof step !== 'object' || step === null || !('model' in step)) return step;
      const s = step as { model: Record<string, unknown> };
      return { ...s, model: { ...s.model, provider, model: name } };
    }),
  };
}

