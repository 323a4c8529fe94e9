/**
 * The OpenAI Chat Completions message list, and DeepSeek's dialect of it, <-> IR.
 *
 * Native history: the `messages` array itself (the system prompt is its first message).
 * One reader serves both dialects and accepts the union of their spellings (DeepSeek's
 * `reasoning_content`, OpenAI's `image_url` parts), so a history from any OpenAI-compatible
 * client is read without guessing; the two writers differ only where the wires do.
 *
 * | OpenAI family                                    | IR                                      |
 * |--------------------------------------------------|-----------------------------------------|
 * | first message `system` or `developer`            | `system` (written back as `system`)     |
 * | `user` message                                   | `user` message (text, images)           |
 * | `assistant` {content, tool_calls}                | `assistant` [text..., toolCall...]      |
 * | `reasoning_content` (DeepSeek)                   | reasoning, before the text              |
 * | consecutive `tool` messages                      | one `tool` message, one result each     |
 * | `tool` {tool_call_id, content, name?}            | toolResult {callId, content, name?}     |
 * | `function.arguments`, a JSON string              | toolCall.arguments, the decoded object  |
 *
 * Arguments: a JSON string on the wire. An already-decoded object is tolerated on input
 * (written back as its string). A string that is not JSON, or is JSON but not an object, is
 * refused naming the message and the call; it is never replaced by `{}`.
 *
 * What the wire cannot say, and how it is kept (see extension.ts; all under `x-agentplane`):
 * - Order inside a turn. An assistant message is [reasoning] [content] [tool_calls] in that
 *   order, and a user message cannot hold a tool result, so an IR message whose blocks do not
 *   fit one native message is written as several, each after the first marked `join: true`
 *   (append to the previous IR message). Conversely consecutive `tool` messages are one IR
 *   message by default (all results of one assistant turn), so a `tool` message that starts
 *   a new IR message right after another is marked `split: true`. Neither appears in the
 *   common case: one assistant turn with text and parallel calls, then its results.
 * - `isError` on a tool result: OpenAI has no error flag; `isError: true` on the message.
 * - Reasoning: OpenAI has none; `reasoning: {text, signature?}` on the assistant message.
 *   DeepSeek writes `reasoning_content` and keeps a signature as `reasoningSignature`.
 * - Images where the wire has no image part (every tool result; every DeepSeek message):
 *   a text part whose text is a short placeholder for a model reading the wire and whose
 *   `x-agentplane.image` holds the IR image source. A URL image's media type, on an OpenAI
 *   `image_url` part: `x-agentplane.mediaType`.
 *
 * Canonical spelling: a content that is exactly one text is a string; an assistant message
 * with no text has `content: null`; a user message with no content has `content: []`;
 * `tool_calls` is omitted when empty and each call's `type: "function"` is written even where
 * the input left it out; arguments are `JSON.stringify` of the object; a tool
 * message's `name` is written only when it is not its call's name; image `detail` may be
 * `"auto"` (the default, so dropping it loses nothing) and other values are refused, as
 * the IR has no place for them; participant `name`s on user/assistant messages are refused.
 */
import { z } from 'zod';
import { invalidHistory, parseOrRefuse, type HistoryPath } from './errors';
import { EXTENSION_KEY } from './extension';
import {
  CallNames,
  dataUrlOf,
  imageSourceFromUrl,
  ImageMediaTypeSchema,
  ImageSourceSchema,
  joinSystemParts,
  UrlSchema,
  type Block,
  type Conversation,
  type ImageSource,
  type Message,
  type ReasoningBlock,
  type ResultContentBlock,
  type TextBlock,
  type ToolCallBlock,
  type ToolResultBlock,
} from './ir';
import { canonicalCopy, isPlainJsonObject, jsonFault, type JsonObject } from './json-value';

const JoinFlag = z.boolean().optional();

export const OpenAiTextPartSchema = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  /** Present when this part stands for an image the wire cannot carry here. */
  [EXTENSION_KEY]: z.strictObject({ image: ImageSourceSchema }).optional(),
});
export type OpenAiTextPart = z.infer<typeof OpenAiTextPartSchema>;

export const OpenAiImagePartSchema = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({ url: UrlSchema, detail: z.literal('auto').optional() }),
  [EXTENSION_KEY]: z.strictObject({ mediaType: ImageMediaTypeSchema }).optional(),
});
export type OpenAiImagePart = z.infer<typeof OpenAiImagePartSchema>;

export const OpenAiContentPartSchema = z.discriminatedUnion('type', [OpenAiTextPartSchema, OpenAiImagePartSchema]);
export type OpenAiContentPart = z.infer<typeof OpenAiContentPartSchema>;

const ContentSchema = z.union([z.string(), z.array(OpenAiContentPartSchema)]);

export const OpenAiToolCallSchema = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.strictObject({
    name: z.string().min(1),
    /** A JSON string; an already-decoded object is tolerated. Decoded (and refused) by the reader. */
    arguments: z.unknown(),
  }),
});
export type OpenAiToolCall = z.infer<typeof OpenAiToolCallSchema>;

export const OpenAiSystemMessageSchema = z.strictObject({
  role: z.enum(['system', 'developer']),
  content: z.union([z.string(), z.array(z.strictObject({ type: z.literal('text'), text: z.string() }))]),
});

export const OpenAiUserMessageSchema = z.strictObject({
  role: z.literal('user'),
  content: ContentSchema.nullable(),
  [EXTENSION_KEY]: z.strictObject({ join: JoinFlag }).optional(),
});

export const OpenAiAssistantMessageSchema = z.strictObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(OpenAiTextPartSchema)]).nullable().optional(),
  tool_calls: z.array(OpenAiToolCallSchema).optional(),
  /** DeepSeek's reasoning; `null` is read as absent. */
  reasoning_content: z.string().nullable().optional(),
  [EXTENSION_KEY]: z
    .strictObject({
      join: JoinFlag,
      reasoning: z.strictObject({ text: z.string(), signature: z.string().optional() }).optional(),
      reasoningSignature: z.string().optional(),
    })
    .optional(),
});

export const OpenAiToolMessageSchema = z.strictObject({
  role: z.literal('tool'),
  tool_call_id: z.string().min(1),
  content: ContentSchema,
  name: z.string().optional(),
  [EXTENSION_KEY]: z.strictObject({ join: JoinFlag, split: JoinFlag, isError: z.boolean().optional() }).optional(),
});

export const OpenAiMessageSchema = z.discriminatedUnion('role', [
  OpenAiSystemMessageSchema,
  OpenAiUserMessageSchema,
  OpenAiAssistantMessageSchema,
  OpenAiToolMessageSchema,
]);
export type OpenAiMessage = z.infer<typeof OpenAiMessageSchema>;

/** The native history of both dialects: the messages array. */
export const OpenAiHistorySchema = z.array(OpenAiMessageSchema);
export type OpenAiHistory = z.infer<typeof OpenAiHistorySchema>;

type SystemMessage = z.infer<typeof OpenAiSystemMessageSchema>;
type UserMessage = z.infer<typeof OpenAiUserMessageSchema>;
type AssistantMessage = z.infer<typeof OpenAiAssistantMessageSchema>;
type ToolMessage = z.infer<typeof OpenAiToolMessageSchema>;

// ---- Reading ----

export function openAiFamilyToIR(input: unknown): Conversation {
  const history = parseOrRefuse(OpenAiHistorySchema, input, ['messages']);
  const calls = new CallNames();
  const messages: Message[] = [];
  let system: string | undefined;
  let previousRole: OpenAiMessage['role'] | undefined;

  history.forEach((message, index) => {
    const path: HistoryPath = ['messages', index];
    if (isSystemMessage(message)) {
      if (index !== 0) {
        throw invalidHistory([...path, 'role'], 'a system message is accepted only as the first message: no other format can place a system prompt mid-conversation');
      }
      system = typeof message.content === 'string' ? message.content : joinSystemParts(message.content);
      return;
    }
    const extension = message[EXTENSION_KEY];
    const join = extension?.join === true;
    const split = message.role === 'tool' && message[EXTENSION_KEY]?.split === true;
    if (join && split) throw invalidHistory([...path, EXTENSION_KEY], 'a message cannot both join and split');
    const blocks = chunkToIR(message, path, calls);
    const appendsByDefault = message.role === 'tool' && previousRole === 'tool' && !split;
    previousRole = message.role;

    const current = messages.at(-1);
    if (join || appendsByDefault) {
      if (current === undefined) throw invalidHistory([...path, EXTENSION_KEY, 'join'], 'there is no earlier message to join');
      if ((current.role === 'assistant') !== (message.role === 'assistant')) {
        throw invalidHistory([...path, EXTENSION_KEY, 'join'], `a ${message.role} message cannot join a ${current.role} message`);
      }
      current.blocks.push(...blocks);
      if (current.role === 'user' && blocks.some((block) => block.type === 'toolResult')) current.role = 'tool';
      return;
    }
    const role = message.role === 'assistant' ? 'assistant' : blocks.some((block) => block.type === 'toolResult') ? 'tool' : 'user';
    messages.push({ role, blocks });
  });
  return system === undefined ? { messages } : { system, messages };
}

function isSystemMessage(message: OpenAiMessage): message is SystemMessage {
  return message.role === 'system' || message.role === 'developer';
}

function chunkToIR(message: UserMessage | AssistantMessage | ToolMessage, path: HistoryPath, calls: CallNames): Block[] {
  switch (message.role) {
    case 'user':
      return contentToIR(message.content, [...path, 'content']);
    case 'tool': {
      const name = calls.resultName(message.tool_call_id, message.name);
      const result: ToolResultBlock = {
        type: 'toolResult',
        callId: message.tool_call_id,
        ...(name === undefined ? {} : { name }),
        content: contentToIR(message.content, [...path, 'content']),
        isError: message[EXTENSION_KEY]?.isError === true,
      };
      return [result];
    }
    case 'assistant':
      return assistantToIR(message, path, calls);
  }
}

function contentToIR(content: z.infer<typeof ContentSchema> | null, path: HistoryPath): ResultContentBlock[] {
  if (content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, index): ResultContentBlock => {
    if (part.type === 'image_url') {
      const source = imageSourceFromUrl(part.image_url.url, part[EXTENSION_KEY]?.mediaType, [...path, index, 'image_url', 'url']);
      return { type: 'image', source };
    }
    const image = part[EXTENSION_KEY]?.image;
    return image === undefined ? { type: 'text', text: part.text } : { type: 'image', source: image };
  });
}

function assistantToIR(message: AssistantMessage, path: HistoryPath, calls: CallNames): Block[] {
  const blocks: Block[] = [];
  const extension = message[EXTENSION_KEY];
  const reasoningContent = message.reasoning_content ?? undefined;
  if (extension?.reasoning !== undefined) {
    if (reasoningContent !== undefined || extension.reasoningSignature !== undefined) {
      throw invalidHistory([...path, EXTENSION_KEY, 'reasoning'], 'reasoning is given twice (x-agentplane.reasoning and reasoning_content): give it once');
    }
    blocks.push(reasoningBlock(extension.reasoning.text, extension.reasoning.signature));
  } else if (reasoningContent !== undefined) {
    blocks.push(reasoningBlock(reasoningContent, extension?.reasoningSignature));
  } else if (extension?.reasoningSignature !== undefined) {
    throw invalidHistory([...path, EXTENSION_KEY, 'reasoningSignature'], 'a reasoning signature needs reasoning_content');
  }

  const content = message.content ?? null;
  if (typeof content === 'string') blocks.push({ type: 'text', text: content });
  else if (content !== null) {
    content.forEach((part, index) => {
      if (part[EXTENSION_KEY]?.image !== undefined) {
        throw invalidHistory([...path, 'content', index, EXTENSION_KEY, 'image'], 'an assistant message carries no images');
      }
      blocks.push({ type: 'text', text: part.text });
    });
  }

  (message.tool_calls ?? []).forEach((call, index) => {
    const argumentsPath = [...path, 'tool_calls', index, 'function', 'arguments'];
    const decoded = decodeArguments(call.function.arguments, argumentsPath, call);
    calls.record(call.id, call.function.name);
    blocks.push({ type: 'toolCall', id: call.id, name: call.function.name, arguments: decoded });
  });
  return blocks;
}

function reasoningBlock(text: string, signature: string | undefined): ReasoningBlock {
  return signature === undefined ? { type: 'reasoning', text } : { type: 'reasoning', text, signature };
}

/**
 * `arguments` as the IR holds it. A string is decoded; an object is taken as already
 * decoded; anything else, undecodable text, or JSON that is not an object is refused.
 */
function decodeArguments(raw: unknown, path: HistoryPath, call: OpenAiToolCall): JsonObject {
  const which = `the arguments of call ${JSON.stringify(call.id)} to ${JSON.stringify(call.function.name)}`;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw invalidHistory(path, `${which} are not valid JSON (${reason}): ${preview(raw)}`);
    }
    if (!isPlainJsonObject(value)) {
      throw invalidHistory(path, `${which} are JSON but not a JSON object (${describeJson(value)}); Claude and Gemini can carry only objects`);
    }
  } else if (!isPlainJsonObject(raw)) {
    throw invalidHistory(path, `${which} must be a JSON string or an already-decoded JSON object, not ${raw === undefined ? 'missing' : describeJson(raw)}`);
  }
  const fault = jsonFault(value);
  if (fault !== undefined) throw invalidHistory(path, `${which} are not plain JSON: ${fault}`);
  return canonicalCopy(value as JsonObject);
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

// ---- Writing ----

export interface OpenAiDialect {
  /** Whether a user message may hold `image_url` parts (OpenAI yes, DeepSeek no). */
  readonly imageParts: boolean;
  /** Where reasoning goes: `reasoning_content` (DeepSeek) or the extension (OpenAI). */
  readonly reasoning: 'reasoning_content' | 'extension';
}

type Extension = Record<string, unknown>;
/** One native message being written, before the IR-boundary flags are added. */
interface Chunk {
  message: UserMessage | AssistantMessage | ToolMessage;
  extension: Extension;
}

export function openAiFamilyFromIR(conversation: Conversation, dialect: OpenAiDialect): OpenAiHistory {
  const history: OpenAiHistory = [];
  if (conversation.system !== undefined) history.push({ role: 'system', content: conversation.system });
  let previousRole: OpenAiMessage['role'] | undefined;
  for (const message of conversation.messages) {
    const chunks = message.role === 'assistant' ? assistantChunks(message.blocks, dialect) : userSideChunks(message.blocks, dialect);
    chunks.forEach((chunk, index) => {
      // The reader appends a tool message to a preceding one unless told otherwise, and
      // starts a new IR message for anything else unless told otherwise.
      const appendsByDefault = chunk.message.role === 'tool' && previousRole === 'tool';
      if (index === 0 && appendsByDefault) chunk.extension.split = true;
      if (index > 0 && !appendsByDefault) chunk.extension.join = true;
      previousRole = chunk.message.role;
      history.push(withExtension(chunk));
    });
  }
  return history;
}

function withExtension(chunk: Chunk): OpenAiMessage {
  if (Object.keys(chunk.extension).length === 0) return chunk.message;
  return { ...chunk.message, [EXTENSION_KEY]: chunk.extension } as OpenAiMessage;
}

function userSideChunks(blocks: readonly Block[], dialect: OpenAiDialect): Chunk[] {
  const chunks: Chunk[] = [];
  let run: ResultContentBlock[] | undefined;
  const flush = (): void => {
    if (run === undefined) return;
    chunks.push({ message: { role: 'user', content: contentFromIR(run, dialect.imageParts) ?? [] }, extension: {} });
    run = undefined;
  };
  for (const block of blocks) {
    if (block.type === 'toolResult') {
      flush();
      chunks.push(toolChunk(block));
    } else if (block.type === 'text' || block.type === 'image') {
      (run ??= []).push(block);
    }
  }
  flush();
  if (chunks.length === 0) chunks.push({ message: { role: 'user', content: [] }, extension: {} });
  return chunks;
}

function toolChunk(result: ToolResultBlock): Chunk {
  const message: ToolMessage = {
    role: 'tool',
    tool_call_id: result.callId,
    content: contentFromIR(result.content, false) ?? [],
    ...(result.name === undefined ? {} : { name: result.name }),
  };
  return { message, extension: result.isError ? { isError: true } : {} };
}

function assistantChunks(blocks: readonly Block[], dialect: OpenAiDialect): Chunk[] {
  interface Pending {
    reasoning?: ReasoningBlock;
    texts: TextBlock[];
    calls: ToolCallBlock[];
  }
  const pendings: Pending[] = [];
  let pending: Pending = { texts: [], calls: [] };
  const isEmpty = (p: Pending): boolean => p.reasoning === undefined && p.texts.length === 0 && p.calls.length === 0;
  const startNew = (): void => {
    pendings.push(pending);
    pending = { texts: [], calls: [] };
  };
  for (const block of blocks) {
    if (block.type === 'reasoning') {
      if (!isEmpty(pending)) startNew();
      pending.reasoning = block;
    } else if (block.type === 'text') {
      if (pending.calls.length > 0) startNew();
      pending.texts.push(block);
    } else if (block.type === 'toolCall') {
      pending.calls.push(block);
    }
  }
  pendings.push(pending);

  return pendings.map(({ reasoning, texts, calls }): Chunk => {
    const extension: Extension = {};
    const [onlyText] = texts;
    const content = texts.length === 0 ? null : texts.length === 1 && onlyText !== undefined ? onlyText.text : texts.map((text): OpenAiTextPart => ({ type: 'text', text: text.text }));
    const message: AssistantMessage = { role: 'assistant', content };
    if (calls.length > 0) {
      message.tool_calls = calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
    }
    if (reasoning !== undefined) {
      if (dialect.reasoning === 'reasoning_content') {
        message.reasoning_content = reasoning.text;
        if (reasoning.signature !== undefined) extension.reasoningSignature = reasoning.signature;
      } else {
        extension.reasoning = reasoning.signature === undefined ? { text: reasoning.text } : { text: reasoning.text, signature: reasoning.signature };
      }
    }
    return { message, extension };
  });
}

/** Content of a user or tool message; undefined for no blocks (the caller picks the empty spelling). */
function contentFromIR(blocks: readonly ResultContentBlock[], imageParts: boolean): string | OpenAiContentPart[] | undefined {
  const [only] = blocks;
  if (only === undefined) return undefined;
  if (blocks.length === 1 && only.type === 'text') return only.text;
  return blocks.map((block): OpenAiContentPart => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    return imageParts ? imagePart(block.source) : imagePlaceholder(block.source);
  });
}

function imagePart(source: ImageSource): OpenAiImagePart {
  if (source.type === 'base64') return { type: 'image_url', image_url: { url: dataUrlOf(source) } };
  const part: OpenAiImagePart = { type: 'image_url', image_url: { url: source.url } };
  return source.mediaType === undefined ? part : { ...part, [EXTENSION_KEY]: { mediaType: source.mediaType } };
}

/** An image where the wire has no image part: text for a model, the image in the extension. */
function imagePlaceholder(source: ImageSource): OpenAiTextPart {
  const what = source.type === 'base64' ? source.mediaType : source.url;
  return { type: 'text', text: `[image: ${what}]`, [EXTENSION_KEY]: { image: source } };
}
