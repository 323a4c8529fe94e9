/**
 * The embedded default model: local, deterministic, no network and no key, so that demo agents
 * run out of the box and the runtime's failure paths can be exercised without a provider.
 *
 * The answer is a pure function of the request (same messages and maxTokens, same bytes): a
 * short synthetic "summary" of the last user message, its first sentence or first 24 words,
 * prefixed `[local model]` so nobody mistakes it for a real model's output. No randomness, no
 * clock, no environment: a replayed run and a re-run agree byte for byte.
 *
 * Token accounting is by whitespace-separated word (this model has no tokenizer to be faithful
 * to): inputTokens = words in all messages, outputTokens = words in the answer, reasoning zero.
 * maxTokens caps the answer in words; an answer cut there says so (`truncated: true`).
 *
 * Directives. The last user message, when it starts (after leading whitespace) with one of
 * these words, makes the call fail the way a real provider's would, with the kind's
 * disposition, so the runtime's metering and retry paths can be driven from a demo or a test:
 *
 *   !fail:refused      refused before generation: no usage, DidNotHappen.
 *   !fail:unavailable  a 5xx-like failure before any output: no usage, DidNotHappen.
 *   !fail:interrupted  cut after usage was reported: Landed, billed for the input words and the
 *                      words the answer (to the rest of the message) would have had.
 *   !fail:unaccounted  cut after generation began, before usage: Landed, usage null.
 *
 * Conversations. When the request carries earlier turns (more than one user message), the answer
 * says which turn it is and what it remembers of the first one ("(turn 3; earlier: my name is
 * Ada)"), so a conversation carried turn over turn is visible in the answers, deterministically.
 *
 * Any other `!fail:` word is refused as an unknown directive, so a typo fails loudly rather
 * than quietly succeeding. Only the last user message is read for a directive: an earlier turn
 * that exercised a failure does not make every later turn of the conversation fail.
 *
 * Structured output. A request with a `responseSchema` is answered with JSON shaped by it (see
 * instanceOf): the summary in the first string field, the answer's word count in numbers, the
 * first of an enum, each required or declared property filled. So a keyless agent with a
 * `schema` runs end to end, and the runtime's local validation is what is exercised, not this
 * model's cleverness: a schema it cannot satisfy this way (a pattern, a minimum above the count)
 * gets an answer the runtime refuses, as it would refuse a real model's.
 */
import { type Completion, type ModelMessage, type ModelProvider, type ModelRequest, type ModelUsage, ModelError } from '../runtime/model-provider';

export const LOCAL_PROVIDER_ID = 'local';
export const LOCAL_MODEL = 'local-deterministic';

/** Answers are at most this many words of the source, before maxTokens is applied. */
const SUMMARY_WORDS = 24;
const PREFIX = ['[local', 'model]'];

const DIRECTIVE = /^!fail:(\S*)/;

export function createLocalProvider(): ModelProvider {
  return {
    id: LOCAL_PROVIDER_ID,
    profile: {
      provider: LOCAL_PROVIDER_ID,
      driver: 'local-deterministic/1',
      endpoint: 'in-process',
      streaming: false,
      label: 'Local deterministic model (no network, no key)',
    },
    pricing: { inputPerMTokMicros: 0, outputPerMTokMicros: 0 },
    // No stream observer: the answer is computed whole, in process, and sealed at once, so there
    // is nothing live to show (a buffered answer emits no deltas; see ModelStreamObserver).
    complete: (request, signal) => {
      // A promise, not a throw from inside a sync function: callers treat both the same way.
      try {
        return Promise.resolve(completeLocally(request, signal));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
  };
}

function completeLocally(request: ModelRequest, signal: AbortSignal | undefined): Completion {
  if (signal?.aborted) throw new ModelError('unavailable', 'local: cancelled before the call ran');
  if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1) {
    throw new ModelError('refused', `local: maxTokens must be a positive integer, got ${String(request.maxTokens)}`);
  }
  if (request.messages.length === 0) throw new ModelError('refused', 'local: no messages to answer');

  const inputTokens = request.messages.reduce((sum, message) => sum + wordsOf(message.content).length, 0);
  const source = lastUserMessage(request.messages) ?? request.messages[request.messages.length - 1]!;
  const directive = DIRECTIVE.exec(source.content.trimStart());

  if (directive) {
    const rest = source.content.trimStart().slice(directive[0].length);
    const wouldHaveAnswered = capped(answerWords(rest), request.maxTokens).words.length;
    failAs(directive[1] ?? '', { inputTokens, outputTokens: wouldHaveAnswered, reasoningTokens: 0 });
  }

  const userTurns = request.messages.filter((m) => m.role === 'user');
  const memory = userTurns.length > 1 ? [`(turn ${userTurns.length}; earlier: ${wordsOf(userTurns[0]!.content).slice(0, 8).join(' ')})`] : [];
  const answer = answerWords(source.content);
  const { words, truncated } = capped(memory.length > 0 ? [...answer.slice(0, 2), ...wordsOf(memory[0]!), ...answer.slice(2)] : answer, request.maxTokens);
  if (request.responseSchema) {
    // Whole JSON or none: cutting it at maxTokens would only produce an answer nobody can parse.
    const text = JSON.stringify(instanceOf(request.responseSchema, { summary: words.join(' '), count: words.length, usedSummary: false }));
    return { text, usage: { inputTokens, outputTokens: wordsOf(text).length, reasoningTokens: 0 }, model: LOCAL_MODEL, truncated: false, stopReason: 'end' };
  }
  return {
    text: words.join(' '),
    usage: { inputTokens, outputTokens: words.length, reasoningTokens: 0 },
    model: LOCAL_MODEL,
    truncated,
  };
}

function failAs(kind: string, usage: ModelUsage): never {
  switch (kind) {
    case 'refused':
      throw new ModelError('refused', 'local: refused by directive !fail:refused (simulated bad request)');
    case 'unavailable':
      throw new ModelError('unavailable', 'local: unavailable by directive !fail:unavailable (simulated 5xx)');
    case 'interrupted':
      throw new ModelError('interrupted', 'local: interrupted by directive !fail:interrupted (simulated stream cut after usage)', usage);
    case 'unaccounted':
      throw new ModelError('unaccounted', 'local: unaccounted by directive !fail:unaccounted (simulated stream cut before usage)', null);
    default:
      throw new ModelError('refused', `local: unknown directive !fail:${kind.slice(0, 32)} (known: refused, unavailable, interrupted, unaccounted)`);
  }
}

function lastUserMessage(messages: readonly ModelMessage[]): ModelMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i];
  return undefined;
}

function wordsOf(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** The whole answer before maxTokens: the prefix, then the first sentence or first words. */
function answerWords(source: string): string[] {
  const words = wordsOf(source);
  if (words.length === 0) return [...PREFIX, '(nothing', 'to', 'summarise)'];
  const flat = words.join(' ');
  const sentence = /^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1];
  const chosen = sentence ? wordsOf(sentence) : words;
  if (chosen.length <= SUMMARY_WORDS) return [...PREFIX, 'Summary:', ...chosen];
  const kept = chosen.slice(0, SUMMARY_WORDS);
  kept[kept.length - 1] = `${kept[kept.length - 1]}…`;
  return [...PREFIX, 'Summary:', ...kept];
}

function capped(words: string[], maxTokens: number): { words: string[]; truncated: boolean } {
  return words.length > maxTokens ? { words: words.slice(0, maxTokens), truncated: true } : { words, truncated: false };
}

interface Filling {
  summary: string;
  count: number;
  /** The summary goes into the first string field only; later ones get the prefix. */
  usedSummary: boolean;
}

/**
 * A deterministic JSON value for a (local, already validated) JSON Schema: `const`, else the
 * first `enum` value, else by `type` (the first listed when several); objects get every declared
 * property; arrays get `minItems` copies of their item. Depth-bounded, since a recursive `$ref`
 * is not followed (this model reads no references at all).
 */
function instanceOf(schema: unknown, fill: Filling, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 8) return null;
  const s = schema as Record<string, unknown>;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0 && s.type === undefined) return instanceOf(options[0], fill, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const properties = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, instanceOf(sub, fill, depth + 1)]));
    }
    case 'array': {
      const count = typeof s.minItems === 'number' ? Math.min(s.minItems, 8) : 0;
      return Array.from({ length: count }, () => instanceOf(s.items, fill, depth + 1));
    }
    case 'string':
      if (fill.usedSummary) return PREFIX.join(' ');
      fill.usedSummary = true;
      return fill.summary;
    case 'integer':
    case 'number':
      return fill.count;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
