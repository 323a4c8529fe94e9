/**
 * Which observed ACP messages are evidence (docs/GOVERNED-RUNTIME.md, "Observing an agent you do
 * not run"). What the agent was asked, what it reported doing and what a person allowed is
 * journaled; the conversation people read is presentation, kept beside the journal in a
 * transcript store with its own retention, and the journal names what it left out by the
 * wire's own words (`omitted: {"agent_message_chunk": 31}` on the run's next record).
 *
 * Only `session/update` notifications of the kinds below are presentation. Every request,
 * response and other notification stays evidence (prompts, tool calls with their kind,
 * locations, diffs and outcomes, permission requests and answers, file and terminal effects,
 * cancels), and so does an update kind this build does not know: it is recorded raw, never
 * dropped, since only a kind we have read can be judged to carry nothing.
 */
import { z } from 'zod';
import { WireDirectionSchema } from './session-view';

/** How a tap records a session: `evidence` (the default) or `full` (every wire message in the journal). */
export const RecordModeSchema = z.enum(['evidence', 'full']);
export type RecordMode = z.infer<typeof RecordModeSchema>;
export const DEFAULT_RECORD_MODE: RecordMode = 'evidence';

/** The session/update kinds that are presentation: chunks, thoughts, plans, modes, command lists, usage, titles, compaction. */
export const PRESENTATION_UPDATES: ReadonlySet<string> = new Set([
  'agent_message_chunk',
  'agent_thought_chunk',
  'user_message_chunk',
  'plan',
  'current_mode_update',
  'available_commands_update',
  'usage_update',
  'config_option_update',
  'session_info_update',
  'compaction_update',
  'compaction_summary_chunk',
]);

/** Counts of what a run left out of the journal, by the wire's own name. */
export const OmittedCountsSchema = z.record(z.string(), z.number().int().positive());
export type OmittedCounts = z.infer<typeof OmittedCountsSchema>;

/**
 * The wire name of a message that is presentation (its session/update kind), or null when the
 * message is evidence. Reads only `method` and `params.update.sessionUpdate`.
 */
export function presentationKindOf(message: unknown): string | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const m = message as { method?: unknown; id?: unknown; params?: unknown };
  if (m.method !== 'session/update' || m.id !== undefined) return null;
  const update = typeof m.params === 'object' && m.params !== null ? (m.params as { update?: unknown }).update : undefined;
  const kind = typeof update === 'object' && update !== null ? (update as { sessionUpdate?: unknown }).sessionUpdate : undefined;
  return typeof kind === 'string' && PRESENTATION_UPDATES.has(kind) ? kind : null;
}

/** One line of a session's transcript: a presentation message as the tap saw it (redacted and capped like a journaled one). */
export const TranscriptLineSchema = z
  .object({
    wire: z.number().int().positive(),
    dir: WireDirectionSchema,
    at: z.string().min(1).max(64),
    kind: z.string().min(1).max(64),
    message: z.unknown(),
  })
  .strict();
export type TranscriptLine = z.infer<typeof TranscriptLineSchema>;
