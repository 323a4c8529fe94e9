/**
 * What every history adapter offers, and the provider names `translate_history` accepts.
 *
 * `toIR` takes the caller's value as it came off the wire (`unknown`): it is parsed against
 * the native zod schema first, so malformed input is refused with the path of the fault in
 * the caller's own document, never half-translated. `fromIR` validates its IR argument too
 * (it is public: an IR built by hand may break an invariant), and then cannot fail.
 */
import { z } from 'zod';
import { describeIssues, HistoryErrorCode, HistoryTranslationError } from './errors';
import { ConversationSchema, type Conversation } from './ir';

export const PROVIDERS = ['claude', 'openai', 'gemini', 'deepseek'] as const;
export const ProviderSchema = z.enum(PROVIDERS);
export type Provider = z.infer<typeof ProviderSchema>;

export interface HistoryAdapter<Native> {
  readonly provider: Provider;
  /** Native history (validated here) to IR. Throws INVALID_HISTORY naming the path. */
  toIR(history: unknown): Conversation;
  /** IR (validated here) to the native history in this format's canonical spelling. */
  fromIR(conversation: Conversation): Native;
}

/** The IR argument of a `fromIR`, validated; a broken invariant is INVALID_HISTORY. */
export function checkedConversation(conversation: unknown): Conversation {
  const parsed = ConversationSchema.safeParse(conversation);
  if (!parsed.success) {
    throw new HistoryTranslationError(
      HistoryErrorCode.InvalidHistory,
      `not a valid IR conversation: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}
