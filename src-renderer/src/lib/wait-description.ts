/**
 * What a suspended run asks of a person, read from its wait's subject (written by the runtime
 * when it suspended, and hashed: approving means approving exactly this). Each reason has its
 * own subject shape (WaitSubject, parsed by the contract); one this build does not recognise
 * arrives as `unrecognized` and is shown raw rather than guessed at.
 */
import type { RunView, Wait } from '../../../src-shared/ipc/contract';
import { approvalNeedsValue } from '../../../src-shared/vocabulary/decisions';
import { addSpend, BUDGET_FIELD, usedAgainst, type Budget, type Ceiling, type Spend } from '../../../src-shared/vocabulary/spend';
import type { WaitReason, WaitSubjectOf } from '../../../src-shared/vocabulary/waits';
import { paymentAmount, readPaymentRequest } from '../../../src-shared/vocabulary/payments';
import { mcpCallWords, readMcpCall } from './mcp-call';
import { modelRef, readModelRequest } from '../../../src-shared/vocabulary/model-refs';
import { trustClass } from '../../../src-shared/vocabulary/trust';

export const REASON_LABELS: Record<WaitReason, string> = {
  approval: 'Approval needed',
  payment: 'Payment request',
  budget: 'Budget ceiling reached',
  input: 'Input requested',
  oversight: 'Oversight review',
  recovery: 'In doubt: recovery',
  halt: 'Withheld by a halt',
  permission: 'Editor permission request',
  provenance: 'Value from outside',
};

export interface WaitDescription {
  title: string;
  /** The human question in one line, shown above the details: `Pay 12.50 USD to ACME Corp`. */
  summary: string;
  /** The effect in words: `payment request → payee:ACME`. */
  effect: string | null;
  /** The effect's arguments; for a subject this build does not recognise, the whole subject as written. */
  args: unknown;
  estimate: Spend | null;
  /** A payment's cost: its amount (`42.50 USD`), shown in place of a model-cost estimate. */
  amount: string | null;
  /** Budget waits: what was spent, the ceiling, which one was reached, what the next effect may cost. */
  budget: { spent: Spend; budget: Budget; ceiling: Ceiling; next: Spend } | null;
  /** Input waits: the question. */
  prompt: string | null;
  /** Halt waits: the halted scope. */
  scope: string | null;
  /** Editor permission requests: the agent's options and the edit it proposes. */
  permission: WaitSubjectOf<'permission'> | null;
  /**
   * Provenance waits (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"): each protected
   * field, the value it would take, where that value came from (the untrusted origins) and the
   * scope paths it was read through.
   */
  origins: Array<{ field: string; value: unknown; from: string[]; via: string[] }> | null;
}

/** A provenance wait's fields as the card shows them: the untrusted origins first, since they are why it asks. */
function originsOf(subject: WaitSubjectOf<'provenance'>): NonNullable<WaitDescription['origins']> {
  return subject.fields.map((f) => {
    const outside = f.provenance.filter((p) => trustClass(p) === null);
    return { field: f.field, value: f.value, from: outside.length > 0 ? outside : f.provenance, via: f.via };
  });
}

/** What a ceiling counts, in words, and how much of it a spend uses. */
const CEILING_UNITS: Record<Ceiling, string> = { tokens: 'tokens', effects: 'effects', cost: 'micro-units' };

/**
 * The budget wait's number explained: `next call estimated at 73 tokens; 35 of 100 used`, in the
 * unit of the ceiling that was reached.
 */
export function budgetSummary(info: NonNullable<WaitDescription['budget']>): string {
  // The runtime stops a money-costing effect at a money ceiling once the spend is unaccounted
  // (run-context.ts): the meter reads less than was spent, so the number alone would mislead.
  if (info.ceiling === 'cost' && info.spent.unaccounted) {
    return `the spend so far is unaccounted (a model with no price answered, or a call was cut before its bill), so the money ceiling cannot be held; ${usedAgainst(info.spent, 'cost')} of ${info.budget.maxCostMicros ?? 'no limit'} micro-units counted`;
  }
  const unit = CEILING_UNITS[info.ceiling];
  const limit = info.budget[BUDGET_FIELD[info.ceiling]];
  const next = usedAgainst(info.next, info.ceiling);
  const used = usedAgainst(info.spent, info.ceiling);
  return `next call estimated at ${next} ${unit}; ${used} of ${limit ?? 'no limit'} used`;
}

/** `peer beta/ask`; a model call as `model anthropic:claude-sonnet-4-5` (src-shared model-refs.ts). */
function effectWords(subject: { effect: string; name: string; request: unknown }): string {
  const asked = readModelRequest(subject.effect, subject.request);
  return asked ? `model ${modelRef(asked.provider, asked.model)}` : `${subject.effect} ${subject.name}`;
}

/** An `agent` effect's request (runtime/agent-effect.ts: `{agent, input}`), or null for any other effect or shape. */
/** A remote A2A agent's call as its effect's request holds it (runtime/a2a-effect.ts): the card, the skill, the message. */
export function readA2aCall(effect: unknown, request: unknown): { card: string; skill: string | null; message: unknown } | null {
  if (effect !== 'a2a' || typeof request !== 'object' || request === null) return null;
  const { card, skill, message } = request as { card?: unknown; skill?: unknown; message?: unknown };
  return typeof card === 'string' ? { card, skill: typeof skill === 'string' ? skill : null, message } : null;
}

/** "the remote agent at <card> (skill echo)": what a person is asked about. */
export function a2aCallWords(call: { card: string; skill: string | null }): string {
  return `the remote agent at ${call.card}${call.skill ? ` (skill ${call.skill})` : ''}`;
}

function readAgentCall(effect: string, request: unknown): { agent: string; input: unknown } | null {
  if (effect !== 'agent' || typeof request !== 'object' || request === null) return null;
  const { agent, input } = request as { agent?: unknown; input?: unknown };
  return typeof agent === 'string' ? { agent, input } : null;
}

export function describeWait(wait: Wait): WaitDescription {
  const base: WaitDescription = { title: REASON_LABELS[wait.reason], summary: REASON_LABELS[wait.reason], effect: null, args: undefined, estimate: null, amount: null, budget: null, prompt: null, scope: null, permission: null, origins: null };
  const subject = wait.subject;
  switch (subject.kind) {
    case 'approval':
    case 'payment':
    case 'oversight': {
      const destination = subject.destination !== null ? ` → ${subject.destination}` : '';
      const effect = `${effectWords(subject)}${destination}`;
      const payment = subject.effect === 'payment' ? readPaymentRequest(subject.request) : null;
      // An MCP call is asked about as the tool it runs, with the arguments it would send (the
      // server and tool are in the question; the arguments are what the person checks).
      const mcp = readMcpCall(subject.effect, subject.request);
      if (mcp) {
        const summary = subject.kind === 'oversight' ? `Review the call of ${mcpCallWords(mcp)} before it runs` : `Call ${mcpCallWords(mcp)}?`;
        return { ...base, summary, effect, args: mcp.arguments, estimate: subject.estimate };
      }
      // A remote agent is asked about as the message it would be sent (what leaves the plane).
      const remote = readA2aCall(subject.effect, subject.request);
      if (remote) {
        const summary = subject.kind === 'oversight' ? `Review the message to ${a2aCallWords(remote)} before it is sent` : `Send a message to ${a2aCallWords(remote)}?`;
        return { ...base, summary, effect, args: remote.message, estimate: subject.estimate };
      }
      // Another agent called as a tool is asked about as the run it starts, with that run's input.
      const child = readAgentCall(subject.effect, subject.request);
      if (child) {
        const summary = subject.kind === 'oversight' ? `Review the start of a run of agent ${child.agent} before it runs` : `Start a run of agent ${child.agent}?`;
        return { ...base, summary, effect, args: child.input, estimate: subject.estimate };
      }
      if (payment) {
        const amount = paymentAmount(payment.amount, payment.currency);
        return { ...base, summary: `Pay ${amount} to ${payment.payee}`, effect, args: subject.request, amount };
      }
      const summary = subject.kind === 'oversight' ? `Review ${effect} before it runs` : `Allow ${effect}?`;
      return { ...base, summary, effect, args: subject.request, estimate: subject.estimate };
    }
    case 'recovery': {
      const mcp = readMcpCall(subject.effect, subject.request);
      if (mcp) return { ...base, summary: `Did the call of ${mcpCallWords(mcp)} happen? Retry it, mark it landed, or fail the run`, effect: `${subject.effect} ${subject.name}`, args: mcp.arguments };
      // A remote task was sent (or created) and lost: its id is in the failure; the person checks with the remote agent.
      const remote = readA2aCall(subject.effect, subject.request);
      if (remote) return { ...base, summary: `Did ${a2aCallWords(remote)} act on the message? Retry it, mark it landed, or fail the run`, effect: `${subject.effect} ${subject.name}`, args: remote.message };
      return { ...base, summary: `Did ${effectWords(subject)} happen? Retry it, mark it landed, or fail the run`, effect: effectWords(subject), args: subject.request };
    }
    case 'budget': {
      const budget = { spent: subject.spent, budget: subject.budget, ceiling: subject.ceiling, next: subject.next.estimate };
      return {
        ...base,
        summary: budgetSummary(budget),
        effect: `next: ${subject.next.effect} ${subject.next.name}`,
        estimate: subject.next.estimate,
        budget,
      };
    }
    case 'input':
      return { ...base, summary: `Answer: ${subject.prompt}`, prompt: subject.prompt };
    case 'halt':
      return { ...base, summary: `Withheld by a halt on ${subject.scope}: lift it to let the run go on`, scope: subject.scope };
    case 'permission': {
      const what = subject.toolCall.title ?? 'a tool call';
      const where = subject.toolCall.locations.map((l) => (l.line === undefined ? l.path : `${l.path}:${l.line}`)).join(', ');
      const kind = subject.toolCall.toolKind ? ` (${subject.toolCall.toolKind})` : '';
      return {
        ...base,
        summary: `${subject.agent} asks to run ${what}${kind}${where ? ` on ${where}` : ''}`,
        effect: `${subject.toolCall.toolKind ?? 'tool'} ${what}`,
        permission: subject,
      };
    }
    case 'provenance': {
      const origins = originsOf(subject);
      const from = [...new Set(origins.flatMap((o) => o.from))].join(', ');
      const destination = subject.destination !== null ? ` → ${subject.destination}` : '';
      const summary = `The ${origins.map((o) => o.field).join(' and ')} of ${effectWords(subject)} came from ${from}: let ${origins.length > 1 ? 'them' : 'it'} through?`;
      return { ...base, summary, effect: `${effectWords(subject)}${destination}`, args: subject.request, estimate: subject.estimate, origins };
    }
    case 'unrecognized':
      return { ...base, title: `${base.title} (as written by another version)`, summary: 'A wait written by another version of AgentPlane: read its subject below', args: subject.raw };
  }
}

/** The one-line question with whom it is for and which run: what the toast and notification say. */
export function waitHeadline(run: Pick<RunView, 'runId' | 'owner' | 'chain' | 'agent'>, description: WaitDescription): string {
  return `${description.summary} — for ${behalfOf(run)}, run ${run.runId} (${run.agent})`;
}

/** Who acts for whom: `user:local` or `peer:alpha → …`. */
export function behalfOf(run: Pick<RunView, 'owner' | 'chain'>): string {
  return run.chain.length > 1 ? run.chain.join(' → ') : run.owner;
}

/** Approve with no value needed: what a batch or the palette may approve directly. */
export function approvableDirectly(wait: Pick<Wait, 'reason'>): boolean {
  return wait.reason !== 'halt' && !approvalNeedsValue(wait.reason);
}

/**
 * A suggested raised ceiling for a budget wait: room for what was spent, the next effect and as
 * much again, rounded up to a readable number. The person can change it before approving.
 */
export function suggestedCeiling(description: WaitDescription): Budget {
  const info = description.budget;
  if (!info) return {};
  const field = BUDGET_FIELD[info.ceiling];
  const current = info.budget[field];
  if (current === undefined) return { ...info.budget };
  const roundUp = (n: number) => {
    const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(Math.max(1, n))) - 1);
    return Math.ceil(n / magnitude) * magnitude;
  };
  const needed = usedAgainst(addSpend(info.spent, info.next), info.ceiling);
  return { ...info.budget, [field]: roundUp(Math.max(current * 2, needed * 2)) };
}
