/**
 * The losslessness contract as a property: for random IR conversations `c` and every format
 * F, `F.toIR(F.fromIR(c))` deep-equals `c`, with the native history passed through JSON
 * text in between (plain JSON across boundaries). From it follows that IR(B(A)) = IR(A) for
 * any pair and that A -> B -> A is the identity on canonical A.
 *
 * The generator aims at the corners: a small pool of ids and names (collisions, results
 * answering the wrong-named call, orphans, ids that look like Gemini's positional ones),
 * texts that are or nearly are JSON objects (Gemini's response codec), `{output}`-shaped
 * texts, URLs that look like data URLs, empty messages, empty strings, mixed tool turns,
 * interleaved assistant blocks, consecutive same-role messages.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from './adapter';
import { ConversationSchema, type Block, type Conversation, type ImageSource, type Message, type ResultContentBlock } from './ir';
import type { JsonObject } from './json-value';
import { HISTORY_ADAPTERS } from './translate-history';

const tricky = fc.constantFrom(
  '',
  ' ',
  '{}',
  '{"a":1}',
  '{ "a": 1 }',
  '{"output":"x"}',
  '{"output":1}',
  '{"error":"boom"}',
  '{"x-agentplane":{"content":[],"isError":false}}',
  '{"output":"x","extra":true}',
  '[1,2]',
  'null',
  '"quoted"',
  '[image: image/png]',
);
const text = fc.oneof({ arbitrary: tricky, weight: 2 }, fc.string(), fc.json());

const mediaType = fc.constantFrom('image/png', 'image/jpeg', 'image/webp', 'image/svg+xml');
const url = fc.oneof(
  fc.webUrl(),
  fc.constantFrom('gs://bucket/cat.png', 'data:image/png,rawbytes', 'DATA:image/png;base64,AAAA', 'data:image/png;charset=x;base64,AAAA'),
);
const imageSource: fc.Arbitrary<ImageSource> = fc.oneof(
  fc.record({ type: fc.constant('base64' as const), mediaType, data: fc.base64String() }),
  fc.record({ type: fc.constant('url' as const), url, mediaType }, { requiredKeys: ['type', 'url'] }),
);

const id = fc.oneof(
  fc.constantFrom('call_1', 'call_2', 'toolu_x', 'gemini-call-0-0', 'gemini-call-1-0', 'gemini-call-1-1', 'gemini-call-2-0', 'gemini-result-2-0', 'gemini-result-3-1'),
  fc.string({ minLength: 1 }),
);
const name = fc.constantFrom('get_weather', 'search', 'f');

/** JSON objects as the IR holds them: no -0, no integers beyond 2^53 - 1. */
const jsonObject: fc.Arbitrary<JsonObject> = fc
  .dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
  .map((value) => JSON.parse(JSON.stringify(value)) as JsonObject)
  .filter((value) => !JSON.stringify(value).match(/\d{16,}/));

const textBlock = text.map((t) => ({ type: 'text' as const, text: t }));
const imageBlock = imageSource.map((source) => ({ type: 'image' as const, source }));
const contentBlock: fc.Arbitrary<ResultContentBlock> = fc.oneof(textBlock, imageBlock);
const toolCall = fc.record({ type: fc.constant('toolCall' as const), id, name, arguments: jsonObject });
const toolResult = fc.record(
  {
    type: fc.constant('toolResult' as const),
    callId: id,
    name,
    // One text is the common case, and the one Gemini's response codec has rules for.
    content: fc.oneof(textBlock.map((block) => [block]), fc.array(contentBlock, { maxLength: 3 })),
    isError: fc.boolean(),
  },
  { requiredKeys: ['type', 'callId', 'content', 'isError'] },
);
const reasoning = fc.record({ type: fc.constant('reasoning' as const), text, signature: fc.string() }, { requiredKeys: ['type', 'text'] });

const userMessage: fc.Arbitrary<Message> = fc.array(contentBlock, { maxLength: 4 }).map((blocks) => ({ role: 'user', blocks }));
const assistantMessage: fc.Arbitrary<Message> = fc
  .array(fc.oneof(textBlock, toolCall, toolCall, reasoning), { maxLength: 5 })
  .map((blocks) => ({ role: 'assistant', blocks }));
const toolMessage: fc.Arbitrary<Message> = fc
  .tuple(fc.array(fc.oneof(toolResult, toolResult, contentBlock), { maxLength: 4 }), toolResult, fc.nat())
  .map(([blocks, result, at]): Message => {
    const all: Block[] = [...blocks];
    all.splice(at % (all.length + 1), 0, result);
    return { role: 'tool', blocks: all };
  });

/** A result names its function only when that is not its call's name (the IR's one spelling). */
function withCanonicalResultNames(conversation: Conversation): Conversation {
  const callNames = new Map<string, string>();
  for (const message of conversation.messages) {
    for (const block of message.blocks) {
      if (block.type === 'toolCall') callNames.set(block.id, block.name);
      if (block.type === 'toolResult' && block.name === callNames.get(block.callId)) delete block.name;
    }
  }
  return conversation;
}

const conversation: fc.Arbitrary<Conversation> = fc
  .record(
    { system: text, messages: fc.array(fc.oneof(userMessage, assistantMessage, assistantMessage, toolMessage), { maxLength: 8 }) },
    { requiredKeys: ['messages'] },
  )
  .map(withCanonicalResultNames);

describe('IR -> format -> IR is the identity', () => {
  it('the generator yields valid IR', () => {
    fc.assert(
      fc.property(conversation, (c) => {
        const parsed = ConversationSchema.safeParse(c);
        expect(parsed.success, parsed.error?.message).toBe(true);
      }),
    );
  });

  it.each(PROVIDERS)('%s', (provider) => {
    const adapter = HISTORY_ADAPTERS[provider];
    fc.assert(
      fc.property(conversation, (c) => {
        const native: unknown = JSON.parse(JSON.stringify(adapter.fromIR(c)));
        expect(adapter.toIR(native)).toEqual(c);
      }),
      { numRuns: 400 },
    );
  });

  it.each(PROVIDERS)('%s writes each history in one canonical spelling (write . read . write = write)', (provider) => {
    const adapter = HISTORY_ADAPTERS[provider];
    fc.assert(
      fc.property(conversation, (c) => {
        const native = adapter.fromIR(c);
        expect(adapter.fromIR(adapter.toIR(native))).toEqual(native);
      }),
    );
  });
});
