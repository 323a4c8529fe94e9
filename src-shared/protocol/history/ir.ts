/**
 * The neutral intermediate representation (IR) of a conversation history. Every adapter
 * reads its native format into this and writes this back out; `translate_history` is
 * `fromIR_to(toIR_from(history))`.
 *
 * Losslessness is the contract, stated as: for every valid IR conversation `c` and every
 * format F, `F.toIR(F.fromIR(c))` deep-equals `c` (a property test generates random `c`).
 * Then for a native history `a` of format A and any B, `B.toIR(B.fromIR(A.toIR(a)))` equals
 * `A.toIR(a)`: nothing said in A is lost in B, and A -> B -> A gives `a` back whenever `a` was
 * written in A's canonical spelling (each adapter documents the few spellings it normalises,
 * such as a lone text block written as a string).
 *
 * For that to hold, every fact the IR can state must be expressible in every format (natively
 * or under the `x-agentplane` extension key), and every fact must have exactly one IR
 * spelling. Hence these invariants, checked by `ConversationSchema`:
 *
 * - roles partition the blocks. `user`: text and images. `assistant`: text, tool calls and
 *   reasoning. `tool`: the user-side turn that answers tool calls, holding at least one tool
 *   result and possibly text and images besides (Claude and Gemini allow a user turn that
 *   mixes results with text; OpenAI writes it as tool messages plus a joined user message).
 *   So "does this user-side turn hold a result" decides the role, in every adapter alike.
 * - a tool result groups like Claude's and Gemini's user turn: one `tool` message holds all
 *   the results sent together. The OpenAI family reads consecutive `tool` messages as one
 *   group (what the API means) and marks the rare boundary inside a run of them.
 * - tool call `arguments` is a JSON *object*: Claude's `input` and Gemini's `args` can hold
 *   nothing else, and OpenAI function arguments are objects by definition. An OpenAI string
 *   that decodes to anything else is refused, never wrapped or replaced by `{}`.
 * - a tool result's `name` is present only when it is not the name of the call it answers
 *   (the last earlier tool call with that id): an orphan result, or a provider that recorded
 *   a different name. Gemini needs a name on every response and fills it from the call;
 *   Claude has none; so "same as the call" must have one spelling, and that is absence.
 * - images are `image/*` only, by base64 with a media type or by URL with an optional media
 *   type (Gemini's `fileData.mimeType`). A URL that is itself a base64 data URL is held as
 *   base64 (OpenAI spells base64 images that way, so the two would be indistinguishable).
 * - `system` is one string; a format that splits it into parts has them joined by a blank
 *   line on the way in. A system message anywhere but first is refused by the OpenAI family:
 *   no other format can place one mid-conversation.
 */
import { z } from 'zod';
import { invalidHistory, type HistoryPath } from './errors';
import { JsonObjectSchema } from './json-value';

/** `image/png`, `image/svg+xml`: a media type that also fits in a data URL unescaped. */
export const IMAGE_MEDIA_TYPE = /^image\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;
export const ImageMediaTypeSchema = z.string().regex(IMAGE_MEDIA_TYPE, 'expected an image media type such as image/png');

/** `data:<media type>;base64,<data>`, the only data URL read as base64 image data. */
export const BASE64_DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

export const UrlSchema = z.string().min(1, 'expected a non-empty URL');

export const Base64ImageSourceSchema = z.strictObject({
  type: z.literal('base64'),
  mediaType: ImageMediaTypeSchema,
  data: z.string(),
});
export const UrlImageSourceSchema = z.strictObject({
  type: z.literal('url'),
  url: UrlSchema.refine((url) => !BASE64_DATA_URL.test(url), 'a base64 data URL is held as a base64 source'),
  mediaType: ImageMediaTypeSchema.optional(),
});
export const ImageSourceSchema = z.discriminatedUnion('type', [Base64ImageSourceSchema, UrlImageSourceSchema]);
export type ImageSource = z.infer<typeof ImageSourceSchema>;

export const TextBlockSchema = z.strictObject({ type: z.literal('text'), text: z.string() });
export type TextBlock = z.infer<typeof TextBlockSchema>;

export const ImageBlockSchema = z.strictObject({ type: z.literal('image'), source: ImageSourceSchema });
export type ImageBlock = z.infer<typeof ImageBlockSchema>;

export const ToolCallBlockSchema = z.strictObject({
  type: z.literal('toolCall'),
  id: z.string().min(1),
  name: z.string().min(1),
  /** Decoded arguments: a JSON object, never its string spelling. */
  arguments: JsonObjectSchema,
});
export type ToolCallBlock = z.infer<typeof ToolCallBlockSchema>;

/** What a tool result carries: text and images, in order. */
export const ResultContentBlockSchema = z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema]);
export type ResultContentBlock = z.infer<typeof ResultContentBlockSchema>;

export const ToolResultBlockSchema = z.strictObject({
  type: z.literal('toolResult'),
  callId: z.string().min(1),
  /** Only when it differs from the answered call's name (see the header). */
  name: z.string().min(1).optional(),
  content: z.array(ResultContentBlockSchema),
  isError: z.boolean(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;

export const ReasoningBlockSchema = z.strictObject({
  type: z.literal('reasoning'),
  text: z.string(),
  /** The provider's opaque proof of the reasoning (Claude `signature`, Gemini `thoughtSignature`). */
  signature: z.string().optional(),
});
export type ReasoningBlock = z.infer<typeof ReasoningBlockSchema>;

export const BlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ImageBlockSchema,
  ToolCallBlockSchema,
  ToolResultBlockSchema,
  ReasoningBlockSchema,
]);
export type Block = z.infer<typeof BlockSchema>;

export const RoleSchema = z.enum(['user', 'assistant', 'tool']);
export type Role = z.infer<typeof RoleSchema>;

/** Which block types each role may hold. */
export const BLOCKS_BY_ROLE: Readonly<Record<Role, readonly Block['type'][]>> = {
  user: ['text', 'image'],
  assistant: ['text', 'toolCall', 'reasoning'],
  tool: ['text', 'image', 'toolResult'],
};

export const MessageSchema = z
  .strictObject({ role: RoleSchema, blocks: z.array(BlockSchema) })
  .superRefine((message, ctx) => {
    const allowed = BLOCKS_BY_ROLE[message.role];
    message.blocks.forEach((block, index) => {
      if (!allowed.includes(block.type)) {
        ctx.addIssue({
          code: 'custom',
          path: ['blocks', index, 'type'],
          message: `a ${message.role} message holds only ${allowed.join(', ')} blocks, not ${block.type}`,
        });
      }
    });
    if (message.role === 'tool' && !message.blocks.some((block) => block.type === 'toolResult')) {
      ctx.addIssue({ code: 'custom', path: ['blocks'], message: 'a tool message holds at least one toolResult' });
    }
  });
export type Message = z.infer<typeof MessageSchema>;

export const ConversationSchema = z
  .strictObject({ system: z.string().optional(), messages: z.array(MessageSchema) })
  .superRefine((conversation, ctx) => {
    const calls = new CallNames();
    conversation.messages.forEach((message, messageIndex) => {
      message.blocks.forEach((block, blockIndex) => {
        if (block.type === 'toolCall') calls.record(block.id, block.name);
        if (block.type === 'toolResult' && block.name !== undefined && block.name === calls.nameOf(block.callId)) {
          ctx.addIssue({
            code: 'custom',
            path: ['messages', messageIndex, 'blocks', blockIndex, 'name'],
            message: 'a result names its function only when the name differs from its call (omit it)',
          });
        }
      });
    });
  });
export type Conversation = z.infer<typeof ConversationSchema>;

/** The name of the last tool call seen so far with each id: what a result answers. */
export class CallNames {
  private readonly names = new Map<string, string>();

  record(id: string, name: string): void {
    this.names.set(id, name);
  }

  nameOf(id: string): string | undefined {
    return this.names.get(id);
  }

  /** A native result name in IR spelling: absent when empty or the same as the call's. */
  resultName(callId: string, nativeName: string | undefined): string | undefined {
    return nativeName === undefined || nativeName === '' || nativeName === this.nameOf(callId) ? undefined : nativeName;
  }
}

/**
 * An image named by a URL, in IR spelling: a base64 data URL becomes a base64 source (its
 * media type must be an image type, and agree with `mediaType` when the format gave one).
 */
export function imageSourceFromUrl(url: string, mediaType: string | undefined, path: HistoryPath): ImageSource {
  const data = BASE64_DATA_URL.exec(url);
  if (data === null) return mediaType === undefined ? { type: 'url', url } : { type: 'url', url, mediaType };
  const [, dataMediaType = '', base64 = ''] = data;
  if (!IMAGE_MEDIA_TYPE.test(dataMediaType)) {
    throw invalidHistory(path, `a base64 data URL must hold an image media type such as image/png, not ${JSON.stringify(dataMediaType)}`);
  }
  if (mediaType !== undefined && mediaType !== dataMediaType) {
    throw invalidHistory(path, `the data URL says ${dataMediaType} but the media type given is ${mediaType}`);
  }
  return { type: 'base64', mediaType: dataMediaType, data: base64 };
}

/** The base64 data URL of an image (OpenAI's spelling of inline image data). */
export function dataUrlOf(source: z.infer<typeof Base64ImageSourceSchema>): string {
  return `data:${source.mediaType};base64,${source.data}`;
}

/** Joins the parts of a system prompt given as several text parts (see the header). */
export function joinSystemParts(parts: readonly { text: string }[]): string {
  return parts.map((part) => part.text).join('\n\n');
}
