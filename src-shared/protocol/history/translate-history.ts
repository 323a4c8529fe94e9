/**
 * The core of the MCPv2 `translate_history` skill: a conversation history in one provider's
 * format, rewritten losslessly in another's, through the neutral IR (ir.ts).
 *
 * Request envelope (the skill's `arguments`), `TranslateHistoryRequestSchema`:
 *
 *     { "from": "<provider>", "to": "<provider>", "messages": <native history of `from`> }
 *
 * Response envelope, `TranslateHistoryResponseSchema`:
 *
 *     { "from": "<provider>", "to": "<provider>", "messages": <native history of `to`> }
 *
 * so a response is itself a valid request (with `from` set to its `to`). Providers, and what
 * `messages` is for each (as in that provider's request body; nothing is guessed from shape):
 *
 * - `claude`: `{ system?, messages: [...] }`, or just the `messages` array when there is no
 *   system prompt. Always written as the object (`system` omitted when there is none).
 * - `openai`: the Chat Completions `messages` array; the system prompt is its first message.
 * - `deepseek`: the same array, DeepSeek's dialect (`reasoning_content`, no image parts).
 * - `gemini`: `{ systemInstruction?, contents: [...] }`, or just the `contents` array. Always
 *   written as the object.
 *
 * Failures are `HistoryTranslationError`s with a stable `code`: `UNSUPPORTED_PROVIDER` for a
 * `from` or `to` outside the four names (the message lists them; the peer answers -32010),
 * `INVALID_HISTORY` for anything else, naming the path (the peer answers -32602).
 *
 * from === to is allowed: it rewrites the history in that format's canonical spelling.
 */
import { z } from 'zod';
import { PROVIDERS, ProviderSchema, type HistoryAdapter, type Provider } from './adapter';
import { claudeAdapter, type ClaudeHistory } from './claude';
import { deepSeekAdapter, type DeepSeekHistory } from './deepseek';
import { HistoryErrorCode, HistoryTranslationError, parseOrRefuse } from './errors';
import { geminiAdapter, type GeminiHistory } from './gemini';
import type { Conversation } from './ir';
import { openAiAdapter } from './openai';
import { isRecord } from '../../plain-object';
import type { OpenAiHistory } from './openai-family';

export const TranslateHistoryRequestSchema = z.strictObject({
  /** Checked against the four names by `translateHistory`, so an unknown one is UNSUPPORTED_PROVIDER. */
  from: z.string(),
  to: z.string(),
  /** The native history of `from`, validated by its adapter. */
  messages: z.unknown().refine((value) => value !== undefined, 'expected the native history of `from`'),
});
export type TranslateHistoryRequest = z.infer<typeof TranslateHistoryRequestSchema>;

export const TranslateHistoryResponseSchema = z.strictObject({
  from: ProviderSchema,
  to: ProviderSchema,
  messages: z.unknown(),
});
export type TranslateHistoryResponse = z.infer<typeof TranslateHistoryResponseSchema>;

/** The native history type each provider's adapter writes. */
export interface NativeHistories {
  claude: ClaudeHistory;
  openai: OpenAiHistory;
  gemini: GeminiHistory;
  deepseek: DeepSeekHistory;
}

export const HISTORY_ADAPTERS: { readonly [P in Provider]: HistoryAdapter<NativeHistories[P]> } = {
  claude: claudeAdapter,
  openai: openAiAdapter,
  gemini: geminiAdapter,
  deepseek: deepSeekAdapter,
};

/** `provider` as a Provider, or UNSUPPORTED_PROVIDER naming the four. */
export function providerNamed(provider: unknown, field: 'from' | 'to'): Provider {
  const parsed = ProviderSchema.safeParse(provider);
  if (parsed.success) return parsed.data;
  const given = typeof provider === 'string' ? JSON.stringify(provider) : provider === undefined ? 'nothing' : `a ${typeof provider}`;
  throw new HistoryTranslationError(
    HistoryErrorCode.UnsupportedProvider,
    `${field}: unsupported provider ${given}; expected one of ${PROVIDERS.join(', ')}`,
  );
}

/** The IR of a native history of `provider` (validated). */
export function historyToIR(provider: Provider, history: unknown): Conversation {
  return HISTORY_ADAPTERS[provider].toIR(history);
}

/** `messages` (a native history of `from`) rewritten as a native history of `to`. */
export function translateHistory<To extends Provider>(request: { from: string; to: To; messages: unknown }): NativeHistories[To];
export function translateHistory(request: { from: string; to: string; messages: unknown }): NativeHistories[Provider];
export function translateHistory(request: { from: string; to: string; messages: unknown }): NativeHistories[Provider] {
  const from = providerNamed(request.from, 'from');
  const to = providerNamed(request.to, 'to');
  return HISTORY_ADAPTERS[to].fromIR(historyToIR(from, request.messages));
}

/**
 * The skill's whole answer for its raw `arguments`: the envelope is checked (unknown keys
 * are INVALID_HISTORY), then the history translated.
 */
export function answerTranslateHistory(params: unknown): TranslateHistoryResponse {
  const named: Record<string, unknown> = isRecord(params) ? params : {};
  // Provider names first, so a bad name is reported as such even when the rest is wrong too.
  const from = providerNamed(named.from, 'from');
  const to = providerNamed(named.to, 'to');
  const request = parseOrRefuse(TranslateHistoryRequestSchema, params);
  return { from, to, messages: translateHistory({ from, to, messages: request.messages }) };
}
