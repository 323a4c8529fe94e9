/**
 * What a run's code is given to act on the world: `cx`. Every effect goes through `effect()`,
 * which is where determinism, governance and metering live (Temporal's and Restate's rule:
 * determinism in one place):
 *
 * 1. replay: a step the journal already holds is answered from the record and never performed
 *    again; its key must match the record's, or the run has diverged (an edited prompt or
 *    manifest shows up as divergence, not as a run that quietly did something else);
 * 2. boundary: a cancel is honoured and a halted subject is withheld before any new effect;
 * 3. authority: an effect without its grant is refused ("what is not granted is denied"), and
 *    one whose request carries a value above its destination's or agent's sensitivity ceiling
 *    (egress-ceiling.ts) is refused before it is sent;
 * 4. budget: spent + this effect's estimate is checked against the ceilings, and reaching one
 *    suspends the run for a person rather than failing it silently; the verdict is journaled;
 * 5. approval: a grant marked `approve` (or the agent's oversight) suspends the run before the
 *    effect, with the exact subject and its hash; only a decision naming that hash releases it;
 * 6. EffectStarted, perform, then EffectDone or EffectFailed with its disposition and spend.
 *
 * `now()` and `random()` are effects too (journaled, so replay is deterministic), and an effect
 * found started but never finished (the plane stopped mid-flight) is InDoubt: the run waits for
 * a person to say whether to retry it, take it as landed, or fail the run. The one exception is
 * an effect marked `resumable` (a child run, whose id the effect determines): performing it
 * again attaches to the same far side, so the open attempt is simply continued.
 */
import { canonicalize } from '../../src-shared/journal/canonical-json';
import { MAX_REUSED_STEPS, type AnyRecordDraft, type JournalRecord, type RecordDraft } from '../../src-shared/journal/records';
import { OUTSIDE_EFFECTS, type EffectKind } from '../../src-shared/vocabulary/effects';
import { recordedFailureCode } from '../../src-shared/vocabulary/failures';
import { waitIdOf } from '../../src-shared/vocabulary/ids';
import { addSpend, ceilingCrossed, NO_SPEND, type Budget, type Spend } from '../../src-shared/vocabulary/spend';
import type { WaitSubject } from '../../src-shared/vocabulary/waits';
import type { Journal } from '../journal/journal';
import type { PreparedDraft } from '../journal/journal-store';
import { randomUnit } from '../base/random-ids';
import { sha256Hex } from '../journal/sqlite-store';
import type { ModelTextSink } from './model-stream';
import { decisionOn, type RunHistory } from './run-history';
import { DivergenceError, EffectFailure, ReplayStop, ReplayUngranted, RunCancelled, RunDenied, RunSuspended } from './run-signals';
import { describeUnaccepted, sinkVerdict } from './sink-check';
import { assertWithinCeiling, egressOf } from './egress-ceiling';
import { Sensitivity, type Labelled } from '../../src-shared/vocabulary/sensitivity';
import type { EffectOutcome, EffectSpec, ForkReuse, OutsideHop, ReuseAnswer, RunGovernance } from './effect-spec';

export type { EffectAt, EffectOutcome, EffectSpec, ForkReuse, OutsideHop, ReuseAnswer, RunGovernance } from './effect-spec';

/** The failure of an effect stopped by a halt right before it left (assertNotHalted, via hop()). */
const HALTED_AT_HOP = 'HaltedAtHop';

/** An effect's answer, the provenance it was journaled with, and its sensitivity label (absent: the lowest). */
type Answer = Pick<EffectOutcome, 'result' | 'provenance' | 'sensitivity'>;

/** Effects that reach outside the plane: a fork asks before performing one its parent performed. */
const OUTSIDE: ReadonlySet<EffectKind> = new Set(OUTSIDE_EFFECTS);

export function effectKey(spec: Pick<EffectSpec, 'effect' | 'name' | 'request' | 'destination' | 'identity'>): string {
  return sha256Hex(canonicalize({ effect: spec.effect, name: spec.name, request: spec.request, destination: spec.destination ?? null, identity: spec.identity ?? null }));
}

export function subjectHash(subject: unknown): string {
  return sha256Hex(canonicalize(subject));
}

export class RunContext {
  private step = 0;
  private spend: Spend;
  private budget: Budget;
  private written = 0;
  /**
   * Records written but not yet committed: the starts and answers of local effects (clock and
   * random reads, effects marked `local`), and the run's admission when the runtime admitted it
   * for a caller who waits for the end (Runtime.run). Nothing outside the plane has seen them or
   * anything that depends on them, so they need not be durable yet: they go into the same
   * transaction as the run's next durable record, which is the seal, a suspension, a verdict, a
   * failure, or an outside effect's start (docs/DESIGN.md's rule stands: an outside effect's start is
   * durable before it is performed, and everything before it is durable with it). A run made of
   * local effects alone is then one commit, admission to seal, and its caller is answered after
   * it. A plane that stops first loses them with the run, which nobody was told about.
   */
  private held: Array<AnyRecordDraft | PreparedDraft>;
  /**
   * A fork takes its parent's answers from step 0 until its fork step, and stops at the first
   * step it cannot (the parent's step differs, failed, or is missing): from there every step is
   * live, so the fork never takes an answer meant for a different history.
   */
  private reusing = true;
  /** The EffectReused record being filled (see `reused`), while it is the last held record. */
  private openReused: RecordDraft<'EffectReused'> | null = null;
  /** Commits made through commitWith, and the records of the first (see wholeRunIfOneCommit). */
  private commits = 0;
  private firstCommit: readonly JournalRecord[] | null = null;
  /** This run's records committed by this execution, in seq order (see committedRecords). */
  private readonly committed: JournalRecord[] = [];
  /** The provenances the current step has read or been answered with (see beginStep). */
  private origin = new Set<string>();
  /** The highest sensitivity label the current step has read or been answered with, and where from (see beginStep). */
  private label: Labelled;
  private readonly labels: Sensitivity;

  constructor(
    private readonly history: RunHistory,
    private readonly journal: Journal,
    private readonly governance: RunGovernance,
    /**
     * Where a performed model call's answer is shown while it streams (model-stream.ts); absent:
     * nobody watches. Never journaled, and only a performed effect reaches it, never a replay.
     */
    readonly modelText?: ModelTextSink,
    /** Records to commit with this run's first durable record (the admission, for Runtime.run). */
    held: readonly (AnyRecordDraft | PreparedDraft)[] = [],
    /** A fork's parent's answers (ForkReuse); absent for every other run. */
    private readonly reuse?: ForkReuse,
    /**
     * A dry replay (runtime-forks.ts `replay`): the recorded steps are answered as on any replay,
     * but a step the record does not hold is never performed (ReplayStop), a recorded step no
     * longer granted is a divergence, and nothing is written.
     */
    private readonly dry = false,
  ) {
    this.spend = history.spend;
    this.budget = history.budget;
    this.held = [...held];
    this.labels = governance.sensitivity ?? Sensitivity.defaults();
    this.label = this.labels.bottom();
  }

  get runId(): string {
    return this.history.runId;
  }

  /** Who this run acts for, root first: the caller's chain, never the plane's. */
  actingAs(): readonly string[] {
    return this.history.chain;
  }

  get owner(): string {
    return this.history.owner;
  }

  /** Who supplied the run's input (RunAdmitted.inputProvenance): the first origin a template can read. */
  get inputProvenance(): string {
    return this.history.inputProvenance;
  }

  /** The input's sensitivity label (RunAdmitted.inputSensitivity; absent, the lowest). */
  get inputSensitivity(): string {
    return this.history.inputSensitivity ?? this.labels.lowest;
  }

  /** The operator's labels and ceilings, for joining labels (step-runner.ts). */
  get sensitivity(): Sensitivity {
    return this.labels;
  }

  /**
   * Whether this run has been asked to stop: for an effect that waits on a far side (a remote A2A
   * task) and must pass the cancel on rather than wait for the next step boundary.
   */
  cancelRequested(): boolean {
    return Boolean(this.history.cancelled) || this.governance.cancelRequested(this.runId);
  }

  /** The agent (or skill program) this run executes. */
  get agent(): string {
    return this.history.agent;
  }

  /** Records this run has, the ones written during this execution included. */
  get recordCount(): number {
    return this.history.records + this.written;
  }

  get spent(): Spend {
    return this.spend;
  }

  /** The ceilings in force now (the manifest's, or what a person raised them to). */
  get ceilings(): Budget {
    return this.budget;
  }

  /**
   * A step begins with nothing; what its arguments were rendered from (addOrigin), every effect it
   * performs or replays, and a person's answer to its question add their provenances. `stepProvenance()` is then everything the step's
   * result (and a model's choice of tool and arguments mid-step) can have been made from.
   */
  beginStep(): void {
    this.origin = new Set();
    this.label = this.labels.bottom();
  }
  /** The current step read values of these provenances (its rendered arguments), of this sensitivity label. */
  addOrigin(provenance: Iterable<string>, label?: Labelled): void {
    for (const p of provenance) this.origin.add(p);
    if (label) this.label = this.labels.join(this.label, label);
  }
  stepProvenance(): string[] {
    return [...this.origin].sort();
  }
  /**
   * The highest label the current step has read or been answered with: what any request it sends
   * next carries (its arguments, and a model's choice mid-step), and what its result is.
   */
  stepSensitivity(): Labelled {
    return this.label;
  }

  async effect(spec: EffectSpec): Promise<unknown> {
    const at = this.step;
    const { result, provenance, sensitivity } = await this.answer(spec);
    this.origin.add(provenance);
    if (sensitivity !== undefined) this.label = this.labels.join(this.label, { label: sensitivity, from: [`the answer of ${egressOf(spec) ?? spec.name} (step ${at})`] });
    return result;
  }

  private async answer(spec: EffectSpec): Promise<Answer> {
    const step = this.step++;
    const key = effectKey(spec);
    const attempts = this.history.steps.get(step) ?? [];
    const last = attempts.at(-1);
    if (last && last.started.key !== key) throw new DivergenceError(step, last.started.key, key, `${spec.effect} ${spec.name}`);
    if (this.dry) {
      if (!last) throw new ReplayStop(step, key, spec);
      if (spec.grant !== null && !this.governance.grants.has(spec.grant)) throw new ReplayUngranted(step, spec.grant);
    }
    // The same rule on every execution: a step this fork performed itself ends its reuse.
    if (last && !last.reused) this.reusing = false;
    if (!last && this.reuse && this.reusing && step < this.reuse.until) {
      const answer = this.reuse.answerAt(step);
      if (answer?.key === key) return { result: this.reused(step, key, spec, answer), provenance: answer.provenance, ...(answer.sensitivity !== undefined ? { sensitivity: answer.sensitivity } : {}) };
      this.reusing = false;
    }
    if (last?.done) return { result: last.done.result, provenance: last.done.provenance, ...(last.done.sensitivity !== undefined ? { sensitivity: last.done.sensitivity } : {}) };
    if (last?.failed && last.failed.disposition !== 'InDoubt') {
      // Stopped by a halt at the hop (assertNotHalted): it did not happen, so once the halt is
      // lifted it is performed anew, as a step withheld between steps would be.
      if (last.failed.error.code === HALTED_AT_HOP && !this.dry) return this.perform(step, key, spec);
      throw new EffectFailure(recordedFailureCode(last.failed.error.code), last.failed.error.message, last.failed.disposition);
    }
    // Started and never finished, but safe to perform again (see EffectSpec.resumable): the same
    // attempt goes on, without a second EffectStarted and without asking anyone.
    if (last && !last.failed && spec.resumable) return this.complete(step, key, spec);
    if (last && !last.failed) {
      // Started and never finished: the plane stopped while it was in flight.
      const failed = await this.write({ runId: this.runId, kind: 'EffectFailed', body: { step, key, disposition: 'InDoubt', error: { code: 'InFlightAtStop', message: 'the plane stopped while this effect was in flight; whether it happened is unknown' }, spend: NO_SPEND } });
      return this.recover(step, key, spec, failed.seq);
    }
    if (last?.failed) return this.recover(step, key, spec, last.failed.seq);
    return this.perform(step, key, spec);
  }

  /** A journaled clock read: the same instant on every replay. */
  async now(): Promise<string> {
    return (await this.effect({ effect: 'clock', name: 'now', request: {}, grant: null, estimate: NO_SPEND, perform: async () => ({ result: new Date().toISOString(), spend: NO_SPEND, provenance: 'plane' }) })) as string;
  }

  /** A journaled random number in [0, 1): the same value on every replay. */
  async random(): Promise<number> {
    return (await this.effect({
      effect: 'random',
      name: 'uniform',
      request: {},
      grant: null,
      estimate: NO_SPEND,
      perform: async () => ({ result: randomUnit(), spend: NO_SPEND, provenance: 'plane' }),
    })) as number;
  }

  /** Waits for a person to supply input; returns what they supplied (journaled in the decision). */
  async waitFor(prompt: string): Promise<unknown> {
    const step = this.step++;
    const waitId = waitIdOf(this.runId, step, 'input');
    const decision = decisionOn(this.history, waitId);
    if (!decision && this.reuse && this.reusing && step < this.reuse.until) {
      const given = this.reuse.inputs.get(step);
      if (given) {
        // The parent's answer to the same question, journaled as this run's decision, naming whose it was.
        const subject: WaitSubject = { kind: 'input', prompt, agent: this.history.agent, owner: this.owner };
        this.origin.add(`person:${given.by}`);
        this.held.push({ runId: this.runId, kind: 'Decision', body: { waitId, decision: 'approve', by: given.by, subjectHash: subjectHash(subject), reason: `taken from run ${this.reuse.parentRunId}, which was answered so at step ${step}`, value: { kind: 'input', input: given.input as never } } });
        this.written += 1;
        return given.input;
      }
      this.reusing = false;
    }
    if (decision?.decision === 'approve') {
      // What a person at this plane answered: theirs (vocabulary/provenance.ts).
      this.origin.add(`person:${decision.by}`);
      return decision.value?.kind === 'input' ? decision.value.input : null;
    }
    if (decision?.decision === 'deny') throw new RunDenied(decision.reason ?? 'input refused');
    if (this.dry) throw new ReplayStop(step, null, null);
    await this.boundary(step);
    return this.suspend(step, { kind: 'input', prompt, agent: this.history.agent, owner: this.owner });
  }

  /**
   * A fork's step answered from its parent's record: nothing performed, nothing spent; held like a
   * local read. It joins the EffectReused record held last when that is the last held record and
   * has room, so consecutive reused steps are one record.
   */
  private reused(step: number, key: string, spec: EffectSpec, answer: ReuseAnswer): unknown {
    const entry = { step, effect: spec.effect, name: spec.name, key, request: spec.request as never, result: answer.result as never, provenance: answer.provenance, ...(answer.sensitivity !== undefined ? { sensitivity: answer.sensitivity } : {}), from: { runId: this.reuse!.parentRunId, seq: answer.seq, hash: answer.hash } };
    const open = this.openReused;
    if (open && this.held.at(-1) === open && open.body.steps.length < MAX_REUSED_STEPS) {
      open.body.steps.push(entry);
    } else {
      this.openReused = { runId: this.runId, kind: 'EffectReused', body: { steps: [entry] } };
      this.held.push(this.openReused);
      this.written += 1;
    }
    return answer.result;
  }

  private async perform(step: number, key: string, spec: EffectSpec): Promise<Answer> {
    await this.boundary(step);
    if (spec.grant !== null && !this.governance.grants.has(spec.grant)) {
      throw new EffectFailure('NotGranted', `${spec.grant} is not granted to agent ${this.history.agent}`, 'DidNotHappen');
    }
    // Above a ceiling it is refused before anything else is asked or written: it must not leave.
    assertWithinCeiling(spec, this.label, this.history.agent, this.labels);
    await this.checkSinks(step, spec);
    await this.checkBudget(step, spec);
    await this.checkApproval(step, spec);
    const started: AnyRecordDraft = {
      runId: this.runId,
      kind: 'EffectStarted',
      body: {
        step,
        effect: spec.effect,
        name: spec.name,
        key,
        request: spec.request,
        ...(spec.destination ? { destination: spec.destination } : {}),
        ...(spec.credential ? { credential: spec.credential } : {}),
      },
    };
    if (isLocal(spec)) {
      // Reading the clock, drawing a number or a local read touches nothing outside: it cannot
      // be in doubt, so its start is held (see `held`) rather than made durable first.
      this.held.push(started);
      this.written += 1;
    } else {
      await this.write(started);
    }
    return this.complete(step, key, spec);
  }

  /** Performs a started effect and journals how it ended. */
  private async complete(step: number, key: string, spec: EffectSpec): Promise<Answer> {
    let outcome: EffectOutcome;
    try {
      outcome = await spec.perform({ runId: this.runId, step, ...(this.labels.rank(this.label.label) > 0 ? { carried: this.label.label } : {}) });
    } catch (error) {
      // The run was parked (the plane closing while a resumable effect waits): nothing is known
      // to have ended, so nothing is written; the next plane continues the open attempt.
      if (error instanceof RunSuspended && spec.resumable) throw error;
      const failure =
        error instanceof EffectFailure
          ? error
          : new EffectFailure('EffectError', error instanceof Error ? error.message.slice(0, 300) : 'the effect failed', 'InDoubt');
      const billed = (error as { spend?: Spend }).spend ?? NO_SPEND;
      const failedDraft: AnyRecordDraft = { runId: this.runId, kind: 'EffectFailed', body: { step, key, disposition: failure.disposition, error: { code: failure.code, message: failure.message }, spend: billed } };
      if (isLocal(spec) && failure.disposition !== 'InDoubt') {
        // A local effect that did not happen (or happened, and said so) leaves nothing outside
        // to be in doubt about: its failure is held like its start. In doubt, it goes to a person.
        this.held.push(failedDraft);
        this.written += 1;
        this.spend = addSpend(this.spend, billed);
        throw failure;
      }
      const failed = await this.write(failedDraft);
      this.spend = addSpend(this.spend, billed);
      if (failure.disposition === 'InDoubt') return this.recover(step, key, spec, failed.seq);
      // Halted at the hop: the run waits on the halt like at a step boundary, and performs anew.
      if (failure.code === HALTED_AT_HOP) {
        await this.boundary(step);
        return this.perform(step, key, spec);
      }
      throw failure;
    }
    const label = this.resultLabel(spec, outcome.sensitivity);
    const done: AnyRecordDraft = { runId: this.runId, kind: 'EffectDone', body: { step, key, result: outcome.result as never, spend: outcome.spend, provenance: outcome.provenance, ...label } };
    if (isLocal(spec)) {
      this.held.push(done);
      this.written += 1;
    } else {
      await this.write(done);
    }
    this.spend = addSpend(this.spend, outcome.spend);
    return { result: outcome.result, provenance: outcome.provenance, ...label };
  }

  /**
   * The label an answer is journaled with: the higher of what the effect said of it (a stored
   * file's own label) and its destination's configured result label (the lowest when it sends
   * nowhere). Written only when
   * above the lowest, so a run under no configuration writes what it wrote before labels; replay
   * reads it from the record, so a configuration changed since gives the same verdicts.
   */
  private resultLabel(spec: EffectSpec, said: string | undefined): { sensitivity?: string } {
    const sensitivity = this.labels;
    const egress = egressOf(spec);
    const configured = egress === null ? sensitivity.lowest : sensitivity.resultOf(egress);
    const label = said !== undefined && sensitivity.rank(said) > sensitivity.rank(configured) ? said : configured;
    return sensitivity.rank(label) > 0 ? { sensitivity: label } : {};
  }

  /**
   * An InDoubt effect: a person decides retry, landed (with a result) or fail. Only a decision
   * taken after this failure counts: a retry that is itself in doubt asks again.
   */
  private async recover(step: number, key: string, spec: EffectSpec, failedSeq: number): Promise<Answer> {
    const latest = decisionOn(this.history, waitIdOf(this.runId, step, 'recovery'));
    const decision = latest && latest.seq > failedSeq ? latest : null;
    if (!decision) {
      return this.suspend(step, { kind: 'recovery', effect: spec.effect, name: spec.name, request: spec.request, agent: this.history.agent, owner: this.owner });
    }
    if (decision.decision === 'deny') {
      throw new EffectFailure('RecoveryFailed', decision.reason ?? 'a person resolved the in-doubt effect as failed', 'InDoubt');
    }
    const resolution = decision.value?.kind === 'recovery' ? decision.value : null;
    if (resolution?.resolution === 'landed') {
      const result = resolution.result ?? null;
      const provenance = `person:${decision.by}`;
      // The result a person says landed is what the destination answered: it keeps the destination's label.
      const label = this.resultLabel(spec, undefined);
      await this.write({ runId: this.runId, kind: 'EffectDone', body: { step, key, result, spend: NO_SPEND, provenance, ...label } });
      return { result, provenance, ...label };
    }
    // retry (or an approval without a recovery value, which v1 decisions read as retry): a new
    // attempt at the same step, under the same key.
    return this.perform(step, key, spec);
  }

  /**
   * The hop an outside effect hands its caller (effect-spec.ts OutsideHop): every hop (peer,
   * MCP, A2A) checks halts through this one place.
   */
  hop(): OutsideHop {
    return { beforeDispatch: () => this.assertNotHalted() };
  }

  /**
   * A halt checked once more inside an effect, right before its request leaves (after a peer's
   * credential is in hand, an MCP server's connection is open, an A2A card is fetched): the
   * halt may have come while the effect was being prepared. Throws a DidNotHappen failure,
   * which `complete` journals and then waits on the halt like `boundary` does.
   */
  private assertNotHalted(): void {
    const halted = this.governance.haltedBy(this.history);
    if (halted) throw new EffectFailure(HALTED_AT_HOP, `withheld by halt ${halted} before the call left; it will be performed once the halt is lifted`, 'DidNotHappen');
  }

  /** Cancel and halts are honoured here, before anything new is done. */
  private async boundary(step: number): Promise<void> {
    if (this.history.cancelled || this.governance.cancelRequested(this.runId)) throw new RunCancelled('cancelled');
    const halted = this.governance.haltedBy(this.history);
    if (halted) await this.suspend(step, { kind: 'halt', scope: halted, agent: this.history.agent, owner: this.owner });
  }

  private async checkBudget(step: number, spec: EffectSpec): Promise<void> {
    const ceiling = ceilingCrossed(this.spend, spec.estimate, this.budget) ?? this.moneyCeilingUnholdable(spec);
    if (!ceiling) return;
    const waitId = waitIdOf(this.runId, step, 'budget');
    const decision = decisionOn(this.history, waitId);
    if (decision?.decision === 'approve') {
      if (decision.value?.kind === 'budget') this.budget = decision.value.budget;
      if (!ceilingCrossed(this.spend, spec.estimate, this.budget)) return;
    }
    if (decision?.decision === 'deny') throw new RunDenied(decision.reason ?? 'stopped at its budget ceiling');
    if (this.history.pending?.waitId !== waitId) {
      await this.write({ runId: this.runId, kind: 'BudgetVerdict', body: { step, verdict: 'ceilingReached', ceiling, spent: this.spend, budget: this.budget } });
    }
    await this.suspend(step, {
      kind: 'budget',
      ceiling,
      spent: this.spend,
      budget: this.budget,
      next: { effect: spec.effect, name: spec.name, estimate: spec.estimate },
      agent: this.history.agent,
      owner: this.owner,
    });
  }

  /**
   * A money ceiling cannot be held once the run's spend is `unaccounted`: a model with no price
   * answered (its tokens were counted, its dollars could not be), or a stream was cut before the
   * wire said what it cost. The meter then reads less than was spent, so the next effect that
   * can cost money (a model call, or anything estimated at a cost) stops here as though the cost
   * ceiling were reached; the wait's `spent` carries `unaccounted: true`, which is the reason
   * shown to the person. A person's approval of that wait lets that one effect go (they have
   * seen the meter is not whole, as checkBudget's decision path already does for a raised
   * ceiling); the next money-costing effect asks again, until the money ceiling is removed.
   * Unpriced models are refused before they can get here (at admission and in callModel); this
   * catches the model that ANSWERED being unpriced (an alias resolving elsewhere) and the
   * unaccounted rung of the failure ladder.
   */
  private moneyCeilingUnholdable(spec: EffectSpec): 'cost' | null {
    const costsMoney = spec.effect === 'model' || spec.estimate.costMicros > 0;
    return this.budget.maxCostMicros !== undefined && this.spend.unaccounted === true && costsMoney ? 'cost' : null;
  }

  /**
   * A protected field about to take a value from an origin its grant does not accept
   * (sink-check.ts): journaled (ProvenanceVerdict, once), then refused, or put to a person with
   * each field's value and origin; only a decision naming that subject's hash lets it through.
   */
  private async checkSinks(step: number, spec: EffectSpec): Promise<void> {
    const protect = spec.grant === null ? undefined : this.governance.grants.get(spec.grant)?.protect;
    const verdict = sinkVerdict(spec.sinks, protect);
    if (!verdict || spec.grant === null) return;
    const waitId = waitIdOf(this.runId, step, 'provenance');
    const subject: WaitSubject = { kind: 'provenance', ...this.heldEffect(spec), grant: spec.grant, fields: verdict.fields };
    const decision = verdict.verdict === 'asked' ? decisionOn(this.history, waitId) : undefined;
    if (decision?.decision === 'approve' && decision.subjectHash === subjectHash(subject)) return;
    if (decision?.decision === 'deny') throw new RunDenied(decision.reason ?? 'denied');
    const written = verdict.verdict === 'refused' ? this.history.sinkRefused?.includes(step) : this.history.pending?.waitId === waitId;
    if (!written) await this.write({ runId: this.runId, kind: 'ProvenanceVerdict', body: { step, grant: spec.grant, verdict: verdict.verdict, fields: verdict.fields as never } });
    if (verdict.verdict === 'refused') throw new EffectFailure('ProvenanceRefused', `${spec.effect} ${spec.name}: ${describeUnaccepted(verdict.fields, protect)}`, 'DidNotHappen');
    await this.suspend(step, subject);
  }

  private async checkApproval(step: number, spec: EffectSpec): Promise<void> {
    // A fork performing again an outside effect its parent performed (the same step and key) asks first.
    const again = OUTSIDE.has(spec.effect) && this.reuse?.outsideAt(step) === effectKey(spec);
    const needs = spec.grant !== null && (again || this.governance.grants.get(spec.grant)?.approve || this.governance.approveEveryEffect);
    if (!needs) return;
    const subject: WaitSubject = { kind: spec.effect === 'payment' ? 'payment' : 'approval', ...this.heldEffect(spec) };
    const decision = decisionOn(this.history, waitIdOf(this.runId, step, subject.kind));
    if (decision?.decision === 'approve' && decision.subjectHash === subjectHash(subject)) return;
    if (decision?.decision === 'deny') throw new RunDenied(decision.reason ?? 'denied');
    await this.suspend(step, subject);
  }

  /** An effect as a wait's subject shows it held: what, with which arguments, where to, for whom. */
  private heldEffect(spec: EffectSpec) {
    return { effect: spec.effect, name: spec.name, request: spec.request, destination: spec.destination ?? null, estimate: spec.estimate, agent: this.history.agent, owner: this.owner, chain: this.history.chain };
  }

  /** Waits for a person on `subject`; its kind is the wait's reason, and names the wait. */
  private async suspend(step: number, subject: WaitSubject): Promise<never> {
    const waitId = waitIdOf(this.runId, step, subject.kind);
    if (this.history.pending?.waitId !== waitId) {
      await this.write({ runId: this.runId, kind: 'Suspended', body: { step, reason: subject.kind, waitId, subject, subjectHash: subjectHash(subject) } });
    }
    throw new RunSuspended(waitId);
  }

  /** Steps this execution has reached (effects and questions), replayed or performed. */
  get stepsTaken(): number {
    return this.step;
  }

  private async write(draft: AnyRecordDraft): Promise<JournalRecord> {
    const record = await this.commitWith(draft);
    this.written += 1;
    return record;
  }

  /**
   * Commits `draft` durably, in one transaction with every held record before it (see `held`);
   * resolves with `draft`'s record once that commit is done. The runtime seals a run through
   * here, so a run's held records are never left behind its seal.
   */
  async commitWith(draft: AnyRecordDraft): Promise<JournalRecord> {
    if (this.dry) throw new ReplayStop(this.step, null, null);
    const batch = this.held.splice(0);
    batch.push(draft);
    const records = await this.journal.appendBatch(batch);
    for (const record of records) if (record.runId === this.runId) this.committed.push(record);
    this.commits += 1;
    this.firstCommit = this.commits === 1 ? records : null;
    return records.at(-1)!;
  }

  /**
   * Every record of the run, when this execution admitted it and wrote all of it in one commit
   * (a run of local effects: admission to seal in one transaction). Nobody could have written
   * to the run before that commit, since its id was known to nobody, so these records are the
   * whole run as it was at that commit, and its history can be folded from them without reading
   * it back. Null otherwise.
   */
  committedRecords(): readonly JournalRecord[] {
    return this.committed;
  }

  wholeRunIfOneCommit(): readonly JournalRecord[] | null {
    const records = this.firstCommit;
    return records && this.commits === 1 && records[0]?.kind === 'RunAdmitted' && records[0].runId === this.runId ? records : null;
  }
}

/** Whether an effect touches nothing outside the plane (see EffectSpec.local). */
function isLocal(spec: EffectSpec): boolean {
  return spec.effect === 'clock' || spec.effect === 'random' || spec.local === true;
}
