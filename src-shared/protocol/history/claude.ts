/**
 * Claude (Anthropic Messages API) history <-> IR.
 *
 * Native history: `{ system?, messages }` as in the request body, or the bare `messages`
 * array (no system prompt). Written back always as the object, `system` present only when
 * the IR has one. `system` may be a string or text blocks (joined by a blank line).
 *
 * Every block of a message is read, in order. (The adapter this replaces read `content[0]`
 * only and silently dropped the rest: a text + tool_use turn lost its tool call.)
 *
 * | Claude                                          | IR                                      |
 * |-------------------------------------------------|-----------------------------------------|
 * | `user` message holding a `tool_result`          | `tool` message, blocks in order         |
 * | other `user` message                            | `user` message                          |
 * | `assistant` message                             | `assistant` message                     |
 * | `text`                                          | text                                    |
 * | `image`, base64 / url source                    | image, base64 / url source              |
 * | `tool_use` {id, name, input}                    | toolCall {id, name, arguments: input}   |
 * | `tool_result` {tool_use_id, content, is_error}  | toolResult {callId, content, isError}   |
 * | `thinking` {thinking, signature?}               | reasoning {text, signature?}            |
 *
 * Canonical spelling (what is normalised on the way through): a content that is exactly one
 * text block is written as a string; a tool result's empty content is omitted and a single
 * text is a string; `is_error` is written only when true.
 *
 * Claude cannot say two things the IR can (see extension.ts): the media type of a URL image
 * (`x-agentplane.mediaType` on the image block) and a result name that differs from its
 * call's (`x-agentplane.name` on the tool_result block).
 */
import { z } from 'zod';
import { checkedConversation, type HistoryAdapter } from './adapter';
import { invalidHistory, parseOrRefuse, type HistoryPath } from './errors';
import { EXTENSION_KEY } from './extension';
import {
  CallNames,
  imageSourceFromUrl,
  ImageMediaTypeSchema,
  joinSystemParts,
  UrlSchema,
  type Block,
  type Conversation,
  type ImageSource,
  type Message,
  type ResultContentBlock,
} from './ir';
import { canonicalCopy, JsonObjectInputSchema } from './json-value';

export const ClaudeTextBlockSchema = z.strictObject({ type: z.literal('text'), text: z.string() });

export const ClaudeImageBlockSchema = z.strictObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('base64'), media_type: ImageMediaTypeSchema, data: z.string() }),
    z.strictObject({ type: z.literal('url'), url: UrlSchema }),
  ]),
  [EXTENSION_KEY]: z.strictObject({ mediaType: ImageMediaTypeSchema }).optional(),
});

export const ClaudeToolUseBlockSchema = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: JsonObjectInputSchema,
});

export const ClaudeToolResultBlockSchema = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion('type', [ClaudeTextBlockSchema, ClaudeImageBlockSchema]))])
    .optional(),
  is_error: z.boolean().optional(),
  [EXTENSION_KEY]: z.strictObject({ name: z.string().min(1) }).optional(),
});

export const ClaudeThinkingBlockSchema = z.strictObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
});

export const ClaudeContentBlockSchema = z.discriminatedUnion('type', [
  ClaudeTextBlockSchema,
  ClaudeImageBlockSchema,
  ClaudeToolUseBlockSchema,
  ClaudeToolResultBlockSchema,
  ClaudeThinkingBlockSchema,
]);
export type ClaudeContentBlock = z.infer<typeof ClaudeContentBlockSchema>;

export const ClaudeMessageSchema = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ClaudeContentBlockSchema)]),
});
export type ClaudeMessage = z.infer<typeof ClaudeMessageSchema>;

export const ClaudeHistorySchema = z.strictObject({
  system: z.union([z.string(), z.array(ClaudeTextBlockSchema)]).optional(),
  messages: z.array(ClaudeMessageSchema),
});
export type ClaudeHistory = z.infer<typeof ClaudeHistorySchema>;

/** What `from: 'claude'` accepts: the object, or the bare messages array. */
export const ClaudeHistoryInputSchema = z.union([ClaudeHistorySchema, z.array(ClaudeMessageSchema)]);

type ClaudeImageBlock = z.infer<typeof ClaudeImageBlockSchema>;
type ClaudeResultContent = z.infer<typeof ClaudeToolResultBlockSchema>['content'];

const USER_BLOCKS: readonly ClaudeContentBlock['type'][] = ['text', 'image', 'tool_result'];
const ASSISTANT_BLOCKS: readonly ClaudeContentBlock['type'][] = ['text', 'tool_use', 'thinking'];

function toIR(input: unknown): Conversation {
  // A bare array is the messages field: parse it there so paths read `messages.3...`.
  const history = parseOrRefuse(ClaudeHistorySchema, Array.isArray(input) ? { messages: input } : input);
  const calls = new CallNames();
  const messages = history.messages.map((message, messageIndex): Message => {
    const path = ['messages', messageIndex, 'content'];
    const content = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    const allowed = message.role === 'user' ? USER_BLOCKS : ASSISTANT_BLOCKS;
    const blocks = content.map((block, blockIndex): Block => {
      const blockPath = [...path, blockIndex];
      if (!allowed.includes(block.type)) {
        throw invalidHistory([...blockPath, 'type'], `a ${message.role} message cannot hold a ${block.type} block (it may hold ${allowed.join(', ')})`);
      }
      return blockToIR(block, blockPath, calls);
    });
    if (message.role === 'assistant') return { role: 'assistant', blocks };
    return { role: blocks.some((block) => block.type === 'toolResult') ? 'tool' : 'user', blocks };
  });
  const system = history.system === undefined ? undefined : typeof history.system === 'string' ? history.system : joinSystemParts(history.system);
  return system === undefined ? { messages } : { system, messages };
}

function blockToIR(block: ClaudeContentBlock, path: HistoryPath, calls: CallNames): Block {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', source: imageToIR(block, path) };
    case 'tool_use':
      calls.record(block.id, block.name);
      return { type: 'toolCall', id: block.id, name: block.name, arguments: canonicalCopy(block.input) };
    case 'tool_result': {
      const name = calls.resultName(block.tool_use_id, block[EXTENSION_KEY]?.name);
      return {
        type: 'toolResult',
        callId: block.tool_use_id,
        ...(name === undefined ? {} : { name }),
        content: resultContentToIR(block.content, [...path, 'content']),
        isError: block.is_error === true,
      };
    }
    case 'thinking':
      return block.signature === undefined
        ? { type: 'reasoning', text: block.thinking }
        : { type: 'reasoning', text: block.thinking, signature: block.signature };
  }
}

function imageToIR(block: ClaudeImageBlock, path: HistoryPath): ImageSource {
  const mediaType = block[EXTENSION_KEY]?.mediaType;
  if (block.source.type === 'base64') {
    if (mediaType !== undefined) throw invalidHistory([...path, EXTENSION_KEY, 'mediaType'], 'only a url image carries an extension media type');
    return { type: 'base64', mediaType: block.source.media_type, data: block.source.data };
  }
  return imageSourceFromUrl(block.source.url, mediaType, [...path, 'source', 'url']);
}

function resultContentToIR(content: ClaudeResultContent, path: HistoryPath): ResultContentBlock[] {
  if (content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((block, index): ResultContentBlock =>
    block.type === 'text' ? { type: 'text', text: block.text } : { type: 'image', source: imageToIR(block, [...path, index]) },
  );
}

function fromIR(input: Conversation): ClaudeHistory {
  const conversation = checkedConversation(input);
  const messages = conversation.messages.map((message): ClaudeMessage => {
    const blocks = message.blocks.map(blockFromIR);
    const [only] = blocks;
    const content = blocks.length === 1 && only?.type === 'text' ? only.text : blocks;
    return { role: message.role === 'assistant' ? 'assistant' : 'user', content };
  });
  return conversation.system === undefined ? { messages } : { system: conversation.system, messages };
}

function blockFromIR(block: Block): ClaudeContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return imageFromIR(block.source);
    case 'toolCall':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.arguments };
    case 'toolResult': {
      const [only] = block.content;
      const content = block.content.length === 0 ? undefined : block.content.length === 1 && only?.type === 'text' ? only.text : block.content.map(resultBlockFromIR);
      return {
        type: 'tool_result',
        tool_use_id: block.callId,
        ...(content === undefined ? {} : { content }),
        ...(block.isError ? { is_error: true } : {}),
        ...(block.name === undefined ? {} : { [EXTENSION_KEY]: { name: block.name } }),
      };
    }
    case 'reasoning':
      return block.signature === undefined
        ? { type: 'thinking', thinking: block.text }
        : { type: 'thinking', thinking: block.text, signature: block.signature };
  }
}

function resultBlockFromIR(block: ResultContentBlock): z.infer<typeof ClaudeTextBlockSchema> | ClaudeImageBlock {
  return block.type === 'text' ? { type: 'text', text: block.text } : imageFromIR(block.source);
}

function imageFromIR(source: ImageSource): ClaudeImageBlock {
  if (source.type === 'base64') return { type: 'image', source: { type: 'base64', media_type: source.mediaType, data: source.data } };
  const image: ClaudeImageBlock = { type: 'image', source: { type: 'url', url: source.url } };
  return source.mediaType === undefined ? image : { ...image, [EXTENSION_KEY]: { mediaType: source.mediaType } };
}

export const claudeAdapter: HistoryAdapter<ClaudeHistory> = { provider: 'claude', toIR, fromIR };
