/**
 * One line per journal record, for the timeline: what happened, in words, from the record's
 * body. A kind this build does not know is still listed (the plane marks it `known: false`)
 * and summarised as such, never hidden.
 */
import type { RecordView } from '../../../src-shared/ipc/contract';
import { oneLineJson, plural, spendLine, budgetLine } from './display-format';
import { tokensOf, type Budget, type Spend } from '../../../src-shared/vocabulary/spend';
import { clip, mcpCallWords, mcpResultText, mcpServerOfProvenance, readMcpCall } from './mcp-call';
import { readA2aCall } from './wait-description';
import { answeredModelOf, modelRef, readModelRequest } from '../../../src-shared/vocabulary/model-refs';
import { trustClass } from '../../../src-shared/vocabulary/trust';
import { describeErasure, erasureOfBody } from '../../../src-shared/journal/erased-payload';

type Body = Record<string, unknown>;

/** `model:<provider>` (a model effect's provenance) → the provider; null for any other. */
function modelProviderOfProvenance(provenance: unknown): string | null {
  return typeof provenance === 'string' && provenance.startsWith('model:') ? provenance.slice('model:'.length) : null;
}

/** What a model call was last asked (journaled large messages are a digest, shown as such). */
function lastMessageOf(request: unknown): string {
  const messages = (request as { messages?: unknown }).messages;
  const last = Array.isArray(messages) ? (messages.at(-1) as { content?: unknown } | undefined) : undefined;
  return typeof last?.content === 'string' ? last.content : last?.content !== undefined ? oneLineJson(last.content, 90) : '';
}
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : oneLineJson(v, 80));

/** A Suspended record's reason as what the run waits for: a person's decision, never something done. */
const WAITING: Record<string, string> = {
  approval: 'waiting for approval',
  payment: 'waiting for approval of the payment',
  oversight: 'waiting for a person’s review',
  budget: 'waiting at the budget ceiling for a person',
  input: 'waiting for an answer',
  recovery: 'in doubt, waiting for a person to resolve it',
  halt: 'withheld by a halt',
  permission: 'waiting for an answer to the permission request',
  provenance: 'waiting for a person to accept where a value came from',
};

export const KIND_LABELS: Record<string, string> = {
  RunAdmitted: 'Admitted',
  AdmissionRefused: 'Refused',
  EffectStarted: 'Effect started',
  EffectDone: 'Effect done',
  EffectFailed: 'Effect failed',
  BudgetVerdict: 'Budget',
  Suspended: 'Suspended',
  Decision: 'Decision',
  Cancelled: 'Cancelled',
  HaltApplied: 'Halt',
  RunSealed: 'Sealed',
  Observation: 'Observation',
  PeerLifecycle: 'Peer',
  RunAdopted: 'Taken over',
  KeyAdmitted: 'Key admitted',
  KeyRetired: 'Key retired',
  RunForked: 'Forked',
  EffectReused: 'Taken from parent',
  ProvenanceVerdict: 'Provenance',
};

/** Visual tone of a kind; the kind's name is always shown in text beside it. */
export function kindTone(record: Pick<RecordView, 'kind' | 'body'>): 'ok' | 'bad' | 'warn' | 'info' | 'plain' {
  const body = record.body as Body;
  switch (record.kind) {
    case 'EffectFailed':
    case 'AdmissionRefused':
      return 'bad';
    case 'Suspended':
    case 'Cancelled':
    case 'HaltApplied':
      return 'warn';
    case 'Decision':
      return body.decision === 'deny' ? 'bad' : body.decision === 'approve' ? 'ok' : 'warn';
    case 'BudgetVerdict':
      return body.verdict === 'ceilingReached' ? 'warn' : 'plain';
    case 'ProvenanceVerdict':
      return body.verdict === 'refused' ? 'bad' : 'warn';
    case 'RunSealed':
      return body.outcome === 'succeeded' ? 'ok' : body.outcome === 'observed' ? 'info' : 'bad';
    case 'EffectDone':
      return 'ok';
    case 'RunAdmitted':
    case 'EffectStarted':
    case 'RunForked':
    case 'EffectReused':
      return 'info';
    default:
      return 'plain';
  }
}

/** What a fork changed of its parent (RunForked's `changed`): `input, model local:tiny`, or that nothing did. */
export function forkChanges(changed: unknown): string {
  const words: string[] = [];
  for (const [what, value] of Object.entries((changed ?? {}) as Body)) {
    if (value === undefined || value === null || value === false) continue;
    words.push(typeof value === 'string' && what === 'model' ? `model ${value}` : what);
  }
  return words.length > 0 ? `changed: ${words.join(', ')}` : 'nothing changed';
}

/** An effect as a step line names it: a model call as `model provider:model`, else `effect name`. */
function effectLine(body: Body): string {
  const asked = readModelRequest(body.effect, body.request);
  return asked ? `model ${modelRef(asked.provider, asked.model)}` : `${str(body.effect)} ${str(body.name)}`;
}

/** The steps an EffectReused record holds (consecutive steps share one record). */
export function reusedSteps(body: Body): Body[] {
  return Array.isArray(body.steps) ? (body.steps as Body[]) : [];
}

/** Where a reused step's answer came from (its `from`): the parent run. */
export function reusedFrom(step: Body | undefined): string {
  const from = step?.from as Body | undefined;
  return `taken from ${str(from?.runId)} (nothing performed)`;
}

export function summarizeRecord(record: RecordView): string {
  const body = record.body as Body;
  if (!record.known) return `${record.kind} v${record.v} (${record.note ?? 'unknown to this build'})`;
  // A payload whose key was destroyed (docs/ERASURE.md) says when, by whom and why, not what it was.
  const erased = erasureOfBody(body);
  if (erased) return `${record.kind === 'RunAdmitted' ? `${str(body.agent)} for ${str(body.owner)} · ` : ''}payload ${describeErasure(erased)}`;
  switch (record.kind) {
    case 'RunAdmitted':
      return `${str(body.agent)} for ${str(body.owner)} via ${str((body.trigger as Body | undefined)?.via)}${body.host ? `, hosted by ${str(body.host)}` : ''}`;
    case 'AdmissionRefused':
      return `${str(body.principal)} may not ${str(body.action)} ${str(body.resource)}: ${str(body.reason)}`;
    case 'EffectStarted': {
      // An MCP call reads as what it is: which tool on which server, with its arguments.
      const call = readMcpCall(body.effect, body.request);
      if (call) return `${mcpCallWords(call)} ${oneLineJson(call.arguments, 90)}${body.destination ? ` → ${str(body.destination)}` : ''}`;
      // A remote A2A agent's call reads as the skill, the card and the message sent.
      const remote = readA2aCall(body.effect, body.request);
      if (remote) return `a2a ${remote.skill ?? 'message'} → ${remote.card} ${typeof remote.message === 'string' ? clip(remote.message, 90) : oneLineJson(remote.message, 90)}`;
      // A model call reads as `provider:model` and what it was last asked, not the request's JSON.
      const asked = readModelRequest(body.effect, body.request);
      if (asked) return `model ${modelRef(asked.provider, asked.model)}${body.destination ? ` → ${str(body.destination)}` : ''} · ${clip(lastMessageOf(body.request), 90)}`;
      return `${str(body.effect)} ${str(body.name)}${body.destination ? ` → ${str(body.destination)}` : ''} ${oneLineJson(body.request, 90)}`;
    }
    case 'EffectDone': {
      const spend = body.spend as Spend | undefined;
      // A tool's result is content blocks: its text says more than their JSON.
      const text = mcpServerOfProvenance(body.provenance) !== null ? mcpResultText(body.result) : null;
      if (text !== null) return `${spend ? spendLine(spend) : ''} · from ${str(body.provenance)} · ${clip(text, 100)}`;
      // A model's answer names the model that answered (the provider's own word), as `provider:model`.
      const provider = modelProviderOfProvenance(body.provenance);
      const answered = provider !== null ? answeredModelOf(body.result) : null;
      if (provider !== null && answered !== null) {
        const answerText = (body.result as { text?: unknown }).text;
        return `${spend ? spendLine(spend) : ''} · answered by ${modelRef(provider, answered)} · ${typeof answerText === 'string' ? clip(answerText, 90) : oneLineJson(body.result, 80)}`;
      }
      return `${spend ? spendLine(spend) : ''} · from ${str(body.provenance)} ${oneLineJson(body.result, 80)}`;
    }
    case 'EffectFailed': {
      const error = body.error as Body | undefined;
      return `${str(body.disposition)} · ${str(error?.code)}: ${str(error?.message)}`;
    }
    case 'BudgetVerdict': {
      const spent = body.spent as Spend | undefined;
      const budget = (body.budget as Budget | undefined) ?? {};
      const verdict = body.verdict === 'ceilingReached' ? `ceiling reached (${str(body.ceiling)})` : body.verdict === 'raised' ? 'ceiling raised' : 'within budget';
      return `${verdict} · spent ${spent ? plural(tokensOf(spent), 'token') : '?'} of ${budgetLine(budget)}`;
    }
    case 'ProvenanceVerdict': {
      const fields = Array.isArray(body.fields) ? (body.fields as Body[]) : [];
      return `${body.verdict === 'refused' ? 'refused' : 'asked a person'} · ${str(body.grant)} · ${fields.map(originLine).join('; ')}`;
    }
    case 'Suspended':
      return `${WAITING[str(body.reason)] ?? `waiting for ${str(body.reason)}`} · ${str(body.waitId)}`;
    case 'Decision':
      return `${str(body.decision)} by ${str(body.by)}${body.reason ? `: ${str(body.reason)}` : ''}${body.until ? ` until ${str(body.until)}` : ''}${body.value !== undefined ? ` · ${oneLineJson(body.value, 60)}` : ''}`;
    case 'Cancelled':
      return `by ${str(body.by)}${body.reason ? `: ${str(body.reason)}` : ''}`;
    case 'HaltApplied':
      return `${body.lifted ? 'lifted' : 'applied'} on ${str(body.scope)} by ${str(body.by)}`;
    case 'RunSealed': {
      const spend = body.spend as Spend | undefined;
      const error = body.error as Body | undefined;
      return `${str(body.outcome)}${error ? ` · ${str(error.code)}: ${str(error.message)}` : ''} · ${spend ? spendLine(spend) : ''} · ${plural(Number(body.records ?? 0), 'record')} before`;
    }
    case 'RunForked':
      return `fork of ${str(body.parent)} at step ${str(body.step)} · ${forkChanges(body.changed)}`;
    case 'EffectReused': {
      const steps = reusedSteps(body);
      const only = steps.length === 1 ? steps[0]! : null;
      if (!only) return `steps ${str(steps[0]?.step)}–${str(steps.at(-1)?.step)}, ${steps.length} effects · ${reusedFrom(steps[0])}`;
      const from = only.from as Body | undefined;
      return `${effectLine(only)} · ${reusedFrom(only)}${from?.seq !== undefined ? `, its seq ${str(from.seq)}` : ''} · ${oneLineJson(only.result, 80)}`;
    }
    case 'Observation':
      return `${str(body.source)} ${str(body.sessionId)} · ${str(body.update)}`;
    case 'PeerLifecycle':
      return `${str(body.peerId)} ${str(body.event)}${body.address ? ` at ${str(body.address)}` : ''}${body.detail ? ` · ${str(body.detail)}` : ''}`;
    case 'RunAdopted':
      return `${str(body.from)} → ${str(body.to)} · ${str(body.reason)}`;
    case 'KeyAdmitted':
      return `${str(body.keyId)} of ${str(body.instance)}`;
    case 'KeyRetired':
      return `${str(body.keyId)} by ${str(body.by)}${body.reason ? `: ${str(body.reason)}` : ''}`;
    default:
      return oneLineJson(body, 120);
  }
}

/**
 * A protected field's value and where it came from: `payee "Mallory" from peer:beta via
 * steps.quote.payee`; the untrusted origins, which are why it was stopped, when there are any.
 */
export function originLine(field: Body): string {
  const via = Array.isArray(field.via) && field.via.length > 0 ? ` via ${(field.via as unknown[]).map(str).join(', ')}` : '';
  const all = Array.isArray(field.provenance) ? (field.provenance as unknown[]).map(str) : [];
  const outside = all.filter((p) => trustClass(p) === null);
  return `${str(field.field)} ${oneLineJson(field.value, 40)} from ${(outside.length > 0 ? outside : all).join(', ') || '?'}${via}`;
}

/** Text a search matches against: kind, summary and the raw body. */
export function searchableText(record: RecordView): string {
  return `${record.kind} ${summarizeRecord(record)} ${oneLineJson(record.body, 4000)}`.toLowerCase();
}
