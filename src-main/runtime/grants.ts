/**
 * A manifest's grants: the agent's whole authority (manifest.ts says how they are read and
 * enforced). Their schema is its own file, which imports nothing of the runtime, so that an effect
 * reading its grants (a2a-effect.ts's signedOnlyCards) does not import manifest.ts, which imports
 * the effects through model-tools.ts.
 */
import { z } from 'zod';
import { A2A_SINKS, ACCEPT_ENTRY, ON_UNACCEPTED, PAYMENT_SINKS, PEER_SINKS } from '../../src-shared/vocabulary/provenance';

/** A name a manifest gives or refers to: an agent, a step's `as`, an MCP server. */
export const ManifestName = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'a lowercase name: letters, digits and dashes, starting with a letter');
/** An A2A agent card's URL: http(s), no whitespace, no fragment (it is a grant's exact name). */
export const A2A_CARD_URL = /^https?:\/\/[^\s#]+$/;

/**
 * A protected field (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"): the provenances
 * whose values it takes (`operator`, `plane`, or labels such as `peer:beta`, `model:*`), and what
 * happens to a value of any other: `ask` suspends the run for a person, `refuse` fails the effect.
 */
const ProtectRuleSchema = z
  .object({
    accept: z.array(z.string().regex(ACCEPT_ENTRY, 'an accept entry is operator, plane, * or a provenance such as peer:beta or model:*')).min(1, 'accept needs at least one entry'),
    otherwise: z.string().refine((v) => (ON_UNACCEPTED as readonly string[]).includes(v), 'otherwise must be ask or refuse').transform((v) => v as (typeof ON_UNACCEPTED)[number]),
  })
  .strict();
/** `protect:` for a grant whose fields are `fields`, exactly: any other key is refused, naming it. */
const protectOf = (fields: readonly string[]) =>
  z
    .record(z.string(), ProtectRuleSchema)
    .superRefine((protect, ctx) => {
      for (const key of Object.keys(protect)) {
        if (!fields.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `${key} is not a field this grant can protect (it can protect ${fields.join(', ')})` });
      }
    })
    .optional();
/** A tool grant, and an MCP tool's, protects the tool's arguments, by name. */
const ToolProtect = z.record(z.string().regex(/^[a-zA-Z_][\w-]*$/, 'a tool argument name'), ProtectRuleSchema).optional();

export const GrantSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('model'), name: z.string().min(1), approve: z.boolean().default(false) }).strict(),
  z.object({ kind: z.literal('tool'), name: z.string().min(1), approve: z.boolean().default(false), protect: ToolProtect }).strict(),
  z.object({ kind: z.literal('peer'), name: z.string().min(1), skills: z.array(z.string().min(1)).min(1), approve: z.boolean().default(false), protect: protectOf(PEER_SINKS) }).strict(),
  // `<server>/<tool>`: one tool of one declared MCP server, exactly (a server cannot widen it).
  z.object({ kind: z.literal('mcp'), name: z.string().regex(/^[a-z][a-z0-9-]{0,62}\/[^/\s]+$/, 'an MCP tool as <server>/<tool>'), approve: z.boolean().default(false), protect: ToolProtect }).strict(),
  z.object({ kind: z.literal('payment'), name: z.literal('request'), approve: z.literal(true, { message: 'a payment grant always needs a person: approve must be true' }), protect: protectOf(PAYMENT_SINKS) }).strict(),
  // Another agent of the plane, offered to a model step as the tool `agent:<name>`: each call a
  // child run in the delegation chain (agent-effect.ts). The named agent's own grants were
  // reviewed in its own manifest; this grant is the operator's word that this agent may delegate to it.
  z.object({ kind: z.literal('agent'), name: ManifestName, approve: z.boolean().default(false) }).strict(),
  // A remote A2A agent by its card's URL, exactly (runtime/a2a-effect.ts): the card describes the
  // agent, this grant is the authority; a card can never widen it. `signed: true` makes
  // verification mandatory: an unsigned card is refused before anything is sent. Without it a
  // card is verified where it is signed (most cards in the wild are not, and a client refusing
  // them all would not be used); with it, nobody can downgrade the call by stripping the signature.
  z.object({ kind: z.literal('a2a'), name: z.string().regex(A2A_CARD_URL, 'an A2A card as its http(s) URL'), approve: z.boolean().default(false), signed: z.boolean().default(false), protect: protectOf(A2A_SINKS) }).strict(),
]);
export type Grant = z.infer<typeof GrantSchema>;
