/**
 * Where a value came from, and whether it may choose what a protected field of an effect does
 * (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"). A provenance is a label: the
 * journal's own (`EffectDone.provenance`, `RunAdmitted.inputProvenance`): `user:<id>`,
 * `person:<id>`, `peer:<id>`, `model:<provider>`, `mcp:<server>`, `a2a:<card>`, `agent:<name>`,
 * `plane`, plus `operator` for what the manifest's own text wrote (a literal).
 *
 * Trusted are two classes only, because only they are the plane's own word:
 * - `operator`: the manifest's literals (the operator's reviewed file), a run's input when a
 *   person at this plane started it (`user:<id>`: the plane's own user, or a signed-in user of a
 *   served plane), and what a person answered at this plane's approvals (`person:<id>`: an input
 *   question, an in-doubt effect resolved as landed);
 * - `plane`: what the plane made itself (a clock read, a payment intent, a file tool's report).
 * Everything else (a peer, a model, an MCP server or caller, an A2A agent or caller, a child
 * run's output, a label this build does not know) is untrusted: an outside party can choose it,
 * and a prompt-injected model says what its input told it to.
 */

import { z } from 'zod';

/** What a ProvenanceVerdict record says was done: the run was put to a person, or the effect refused. */
export const ProvenanceVerdictSchema = z.enum(['asked', 'refused']);
export type ProvenanceVerdictKind = z.infer<typeof ProvenanceVerdictSchema>;

import { OPERATOR, PLANE, trustClass } from './trust';

export { OPERATOR, PLANE, trustClass } from './trust';

/**
 * What a protected field's `accept` entry may be: a trust class (`operator`, `plane`), or a
 * provenance label or pattern (`peer:beta`, `model:*`, `*` for anything).
 */
export const ACCEPT_ENTRY = /^(operator|plane|\*|(user|person|peer|model|mcp|a2a|agent|tool):[^\s]+)$/;

/** Whether an `accept` list takes a value of this provenance. */
export function accepts(accept: readonly string[], provenance: string): boolean {
  const trust = trustClass(provenance);
  return accept.some((entry) => entry === '*' || (trust !== null && entry === trust) || entry === provenance || (entry.endsWith('*') && provenance.startsWith(entry.slice(0, -1))));
}

/** A value on its way to an effect's field: what it is, where it came from, and which scope paths it was read from. */
export interface Traced {
  value: unknown;
  /** Every provenance it was made from, sorted, without repeats (`operator` when only literals). */
  provenance: string[];
  /** The scope paths a template read to make it (`steps.quote.amount`); empty for a literal. */
  via: string[];
}

/** What a protected field does with a value it does not accept: suspend the run for a person, or fail the effect. */
export const ON_UNACCEPTED = ['ask', 'refuse'] as const;
export type OnUnaccepted = (typeof ON_UNACCEPTED)[number];

/** One protected field of a grant: the provenances it takes, and what happens to any other. */
export interface ProtectRule {
  accept: string[];
  otherwise: OnUnaccepted;
}

/** The fields a grant of each kind can protect (`tool` grants: the tool's argument names). */
export const PAYMENT_SINKS = ['amount', 'payee', 'currency'] as const;
export const PEER_SINKS = ['target', 'arguments'] as const;
/** An A2A send's message (its text or data, whole). An MCP grant, like a tool grant, protects the tool's arguments by name. */
export const A2A_SINKS = ['message'] as const;

/**
 * Where a payment grant says nothing: its amount and payee take only trusted values, and any
 * other is put to a person. A payment already waits for a person (its grant must say `approve`),
 * so a run started by a person pays as before; what changes is that a payee or an amount a peer,
 * a model or a remote caller chose is shown as such first. Other grants protect nothing unless
 * they say so: a file write or a peer call on a remote caller's input is today's ordinary use.
 */
export const DEFAULT_PAYMENT_PROTECT: Readonly<Record<string, ProtectRule>> = {
  amount: { accept: [OPERATOR, PLANE], otherwise: 'ask' },
  payee: { accept: [OPERATOR, PLANE], otherwise: 'ask' },
};
