/**
 * What a suspended run asks of a person, read from its wait's subject (written by the runtime
 * when it suspended, and hashed: approving means approving exactly this). Each reason has its
 * own subject shape; anything unexpected is shown raw rather than guessed at.
 */
import type { RunView, Wait } from '../../../src-shared/ipc/contract';
import type { Spend } from '../../../src-shared/journal/records';
import type { Budget } from './display-format';

type Subject = Record<string, unknown>;

export const REASON_LABELS: Record<Wait['reason'], string> = {
  approval: 'Approval needed',
  payment: 'Payment request',
  budget: 'Budget ceiling reached',
  input: 'Input requested',
  oversight: 'Oversight review',
  recovery: 'In doubt: recovery',
  halt: 'Withheld by a halt',
};

export interface WaitDescription {
  title: string;
  /** The effect in words: `payment request → payee:ACME`. */
  effect: string | null;
  args: unknown;
  estimate: Spend | null;
  /** Budget waits: what was spent, the ceiling, which one was reached. */
  budget: { spent: Spend; budget: Budget; ceiling: string; next: Spend | null } | null;
  /** Input waits: the question. */
  prompt: string | null;
  /** Halt waits: the halted scope. */
  scope: string | null;
}

const asObject = (value: unknown): Subject => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Subject) : {});
const asSpend = (value: unknown): Spend | null => {
  const s = asObject(value);
  return typeof s.effects === 'number' ? (s as unknown as Spend) : null;
};

export function describeWait(wait: Wait): WaitDescription {
  const subject = asObject(wait.subject);
  const base: WaitDescription = { title: REASON_LABELS[wait.reason], effect: null, args: undefined, estimate: null, budget: null, prompt: null, scope: null };
  switch (wait.reason) {
    case 'approval':
    case 'payment':
    case 'oversight':
    case 'recovery': {
      const destination = typeof subject.destination === 'string' ? ` → ${subject.destination}` : '';
      return {
        ...base,
        effect: `${String(subject.effect ?? '?')} ${String(subject.name ?? '')}${destination}`.trim(),
        args: subject.request,
        estimate: asSpend(subject.estimate),
      };
    }
    case 'budget': {
      const next = asObject(subject.next);
      return {
        ...base,
        effect: next.effect ? `next: ${String(next.effect)} ${String(next.name ?? '')}`.trim() : null,
        estimate: asSpend(next.estimate),
        budget: {
          spent: asSpend(subject.spent) ?? { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 },
          budget: asObject(subject.budget) as Budget,
          ceiling: String(subject.ceiling ?? 'tokens'),
          next: asSpend(next.estimate),
        },
      };
    }
    case 'input':
      return { ...base, prompt: typeof subject.prompt === 'string' ? subject.prompt : JSON.stringify(subject.prompt ?? null) };
    case 'halt':
      return { ...base, scope: typeof subject.scope === 'string' ? subject.scope : null };
  }
}

/** Who acts for whom: `user:local` or `peer:alpha → …`. */
export function behalfOf(run: Pick<RunView, 'owner' | 'chain'>): string {
  return run.chain.length > 1 ? run.chain.join(' → ') : run.owner;
}

/** Approve with no value needed: what a batch or the palette may approve directly. */
export function approvableDirectly(wait: Wait): boolean {
  return wait.reason === 'approval' || wait.reason === 'payment' || wait.reason === 'oversight';
}

/**
 * A suggested raised ceiling for a budget wait: room for what was spent, the next effect and as
 * much again, rounded up to a readable number. The person can change it before approving.
 */
export function suggestedCeiling(description: WaitDescription): Budget {
  const info = description.budget;
  if (!info) return {};
  const raised: Budget = { ...info.budget };
  const next = info.next ?? { effects: 1, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };
  const roundUp = (n: number) => {
    const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(Math.max(1, n))) - 1);
    return Math.ceil(n / magnitude) * magnitude;
  };
  if (info.ceiling === 'tokens' && info.budget.maxTokens !== undefined) {
    const used = info.spent.inputTokens + info.spent.outputTokens + info.spent.reasoningTokens;
    const needed = used + next.inputTokens + next.outputTokens + next.reasoningTokens;
    raised.maxTokens = roundUp(Math.max(info.budget.maxTokens * 2, needed * 2));
  } else if (info.ceiling === 'effects' && info.budget.maxEffects !== undefined) {
    raised.maxEffects = roundUp(Math.max(info.budget.maxEffects * 2, (info.spent.effects + next.effects) * 2));
  } else if (info.ceiling === 'cost' && info.budget.maxCostMicros !== undefined) {
    raised.maxCostMicros = roundUp(Math.max(info.budget.maxCostMicros * 2, (info.spent.costMicros + next.costMicros) * 2));
  }
  return raised;
}
