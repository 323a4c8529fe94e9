/**
 * Gemini (generateContent) history <-> IR.
 *
 * Native history: `{ systemInstruction?, contents }` as in the request body, or the bare
 * `contents` array (no system prompt). Written back always as the object. The system
 * instruction's text parts are joined by a blank line; it is written as one text part.
 *
 * | Gemini                                              | IR                                   |
 * |-----------------------------------------------------|--------------------------------------|
 * | `user` content holding a `functionResponse`         | `tool` message, blocks in order      |
 * | other `user` content / `model` content              | `user` / `assistant` message         |
 * | `{text}`                                            | text                                 |
 * | `{text, thought: true, thoughtSignature?}` (model)  | reasoning {text, signature?}         |
 * | `{inlineData: {mimeType, data}}`                    | image, base64                        |
 * | `{fileData: {fileUri, mimeType?}}`                  | image, url (mediaType = mimeType)    |
 * | `{functionCall: {name, args, id?}}`                 | toolCall                             |
 * | `{functionResponse: {name, response, id?}}`         | toolResult                           |
 *
 * Ids. Gemini's ids are optional; every IR call and result has one. A call without an id
 * gets `gemini-call-<content index>-<part index>`. A response without an id answers the
 * earliest still-unanswered call of the same name, as Gemini pairs them (a response with an
 * id settles the call with that id); with none left, it gets `gemini-result-<c>-<p>`. The
 * writer omits a call's id exactly when it is the positional one, and a response's id only
 * when its call's id is omitted too and the reader would derive the same one. So a Gemini
 * history without ids comes back without ids, one whose responses echo their calls' ids
 * comes back with them, and X -> Gemini -> X keeps X's ids. Both directions drive the same
 * `CallLedger`, so they cannot disagree.
 *
 * Names. A `functionResponse` needs the function's name, which Claude and OpenAI results do
 * not carry: the writer takes it from the call the result answers (the IR keeps a name only
 * when it differs from the call's); an orphan result with no name is written with `""`.
 *
 * The response object. IR results are text and images with an error flag; Gemini's is a
 * JSON object, conventionally `{output}` or `{error}`. One text result is written as:
 * - `{error: text}` when it is an error;
 * - the object itself when the text is exactly the JSON spelling of an object (a tool that
 *   returned `{"temp_c":18}` is shown to Gemini as that object), unless that object is
 *   itself shaped like `{output: string}`, `{error: string}` or `{"x-agentplane": ...}`;
 * - `{output: text}` otherwise.
 * Read back: `{output: string}` and `{error: string}` unwrap, and any other object becomes
 * the text of its JSON spelling. A result that is not one text (none, several, images)
 * is written as `{"x-agentplane": {content, isError}}`.
 *
 * Canonical spelling: `args` is always written (a call without args reads as `{}`);
 * `thought: false` reads as a plain text part; `systemInstruction.role` is not kept (Gemini
 * ignores it).
 *
 * Refused rather than lost: non-image inline or file data (PDF, audio, video), images or
 * function responses in a model turn, function calls or thoughts in a user turn, and a
 * `thoughtSignature` on anything but a thought part (Gemini 3 puts one on function calls;
 * the IR has no place for it yet, and dropping it would make the history unusable there).
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
  ResultContentBlockSchema,
  UrlSchema,
  type Block,
  type Conversation,
  type ImageSource,
  type Message,
  type ResultContentBlock,
} from './ir';
import { canonicalCopy, JsonObjectInputSchema, objectSpelledExactlyBy, type JsonObject, type JsonValue } from './json-value';

const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'] as const;

export const GeminiPartSchema = z
  .strictObject({
    text: z.string().optional(),
    thought: z.boolean().optional(),
    thoughtSignature: z.string().optional(),
    inlineData: z.strictObject({ mimeType: ImageMediaTypeSchema, data: z.string() }).optional(),
    fileData: z.strictObject({ mimeType: ImageMediaTypeSchema.optional(), fileUri: UrlSchema }).optional(),
    functionCall: z
      .strictObject({ id: z.string().min(1).optional(), name: z.string().min(1), args: JsonObjectInputSchema.optional() })
      .optional(),
    functionResponse: z
      .strictObject({ id: z.string().min(1).optional(), name: z.string(), response: JsonObjectInputSchema })
      .optional(),
  })
  .superRefine((part, ctx) => {
    // Gemini's Part is a protobuf oneof: exactly one data field.
    const present = DATA_FIELDS.filter((field) => part[field] !== undefined);
    if (present.length !== 1) {
      const found = present.length === 0 ? 'none' : present.join(' and ');
      ctx.addIssue({ code: 'custom', message: `a part holds exactly one of ${DATA_FIELDS.join(', ')}; found ${found}` });
    }
    if (part.thought !== undefined && part.text === undefined) {
      ctx.addIssue({ code: 'custom', path: ['thought'], message: 'only a text part can be a thought' });
    }
    if (part.thoughtSignature !== undefined && part.thought !== true) {
      ctx.addIssue({
        code: 'custom',
        path: ['thoughtSignature'],
        message: 'a thoughtSignature is supported only on a thought part (thought: true); the IR has no place for one elsewhere',
      });
    }
  });
export type GeminiPart = z.infer<typeof GeminiPartSchema>;

export const GeminiContentSchema = z.strictObject({ role: z.enum(['user', 'model']), parts: z.array(GeminiPartSchema) });
export type GeminiContent = z.infer<typeof GeminiContentSchema>;

export const GeminiHistorySchema = z.strictObject({
  systemInstruction: z
    .strictObject({ role: z.string().optional(), parts: z.array(z.strictObject({ text: z.string() })) })
    .optional(),
  contents: z.array(GeminiContentSchema),
});
export type GeminiHistory = z.infer<typeof GeminiHistorySchema>;

/** What `from: 'gemini'` accepts: the object, or the bare contents array. */
export const GeminiHistoryInputSchema = z.union([GeminiHistorySchema, z.array(GeminiContentSchema)]);

const ResponseExtensionSchema = z.strictObject({ content: z.array(ResultContentBlockSchema), isError: z.boolean() });

export function positionalCallId(contentIndex: number, partIndex: number): string {
  return `gemini-call-${contentIndex}-${partIndex}`;
}

export function positionalResultId(contentIndex: number, partIndex: number): string {
  return `gemini-result-${contentIndex}-${partIndex}`;
}

/**
 * Calls not yet answered, in order; how a response without an id finds its call. The
 * reader and the writer drive the same ledger through the same steps.
 */
class CallLedger {
  private readonly open: { id: string; name: string }[] = [];
  private readonly written = new Set<string>();

  /** `withId`: the call's id is written on the wire (not derived from its position). */
  addCall(id: string, name: string, withId: boolean): void {
    this.open.push({ id, name });
    if (withId) this.written.add(id);
  }

  /** The id the reader gives a response that has none. */
  derivedId(name: string, contentIndex: number, partIndex: number): string {
    return this.open.find((call) => call.name === name)?.id ?? positionalResultId(contentIndex, partIndex);
  }

  /**
   * Whether the writer may leave a response's id out: only when the reader would derive the
   * same id, and the call it answers has no id on the wire either (a response echoes its
   * call's id, as Gemini clients do).
   */
  mayOmitResponseId(callId: string, name: string, contentIndex: number, partIndex: number): boolean {
    return !this.written.has(callId) && this.derivedId(name, contentIndex, partIndex) === callId;
  }

  /** Settles the call a response answers and returns that response's id. */
  settle(explicitId: string | undefined, name: string, contentIndex: number, partIndex: number): string {
    const index = explicitId === undefined ? this.open.findIndex((call) => call.name === name) : this.open.findIndex((call) => call.id === explicitId);
    const [settled] = index >= 0 ? this.open.splice(index, 1) : [];
    return explicitId ?? settled?.id ?? positionalResultId(contentIndex, partIndex);
  }
}

// ---- Reading ----

function toIR(input: unknown): Conversation {
  const history = parseOrRefuse(GeminiHistorySchema, Array.isArray(input) ? { contents: input } : input);
  const ledger = new CallLedger();
  const calls = new CallNames();
  const messages = history.contents.map((content, contentIndex): Message => {
    const blocks = content.parts.map((part, partIndex) =>
      partToIR(part, content.role, ['contents', contentIndex, 'parts', partIndex], { contentIndex, partIndex, ledger, calls }),
    );
    if (content.role === 'model') return { role: 'assistant', blocks };
    return { role: blocks.some((block) => block.type === 'toolResult') ? 'tool' : 'user', blocks };
  });
  const instruction = history.systemInstruction;
  return instruction === undefined ? { messages } : { system: joinSystemParts(instruction.parts), messages };
}

interface Position {
  contentIndex: number;
  partIndex: number;
  ledger: CallLedger;
  calls: CallNames;
}

function partToIR(part: GeminiPart, role: GeminiContent['role'], path: HistoryPath, at: Position): Block {
  const refuse = (field: string, what: string): never => {
    throw invalidHistory([...path, field], `a ${role} turn cannot hold ${what}`);
  };
  if (part.text !== undefined) {
    if (part.thought !== true) return { type: 'text', text: part.text };
    if (role === 'user') refuse('thought', 'a thought');
    return part.thoughtSignature === undefined
      ? { type: 'reasoning', text: part.text }
      : { type: 'reasoning', text: part.text, signature: part.thoughtSignature };
  }
  if (part.inlineData !== undefined) {
    if (role === 'model') refuse('inlineData', 'an image');
    return { type: 'image', source: { type: 'base64', mediaType: part.inlineData.mimeType, data: part.inlineData.data } };
  }
  if (part.fileData !== undefined) {
    if (role === 'model') refuse('fileData', 'an image');
    return { type: 'image', source: imageSourceFromUrl(part.fileData.fileUri, part.fileData.mimeType, [...path, 'fileData', 'fileUri']) };
  }
  if (part.functionCall !== undefined) {
    if (role === 'user') refuse('functionCall', 'a function call');
    const { name, args } = part.functionCall;
    const id = part.functionCall.id ?? positionalCallId(at.contentIndex, at.partIndex);
    at.ledger.addCall(id, name, part.functionCall.id !== undefined);
    at.calls.record(id, name);
    return { type: 'toolCall', id, name, arguments: canonicalCopy(args ?? {}) };
  }
  if (part.functionResponse !== undefined) {
    if (role === 'model') refuse('functionResponse', 'a function response');
    const response = part.functionResponse;
    const callId = at.ledger.settle(response.id, response.name, at.contentIndex, at.partIndex);
    const name = at.calls.resultName(callId, response.name);
    const { content, isError } = responseToIR(response.response, [...path, 'functionResponse', 'response']);
    return { type: 'toolResult', callId, ...(name === undefined ? {} : { name }), content, isError };
  }
  // Unreachable: the schema admits only parts with exactly one data field.
  throw invalidHistory(path, 'a part holds no data');
}

function responseToIR(response: JsonObject, path: HistoryPath): { content: ResultContentBlock[]; isError: boolean } {
  const keys = Object.keys(response);
  const [key] = keys;
  if (keys.length === 1 && key !== undefined) {
    const value = response[key];
    if (key === 'output' && typeof value === 'string') return { content: [{ type: 'text', text: value }], isError: false };
    if (key === 'error' && typeof value === 'string') return { content: [{ type: 'text', text: value }], isError: true };
    if (key === EXTENSION_KEY) return parseOrRefuse(ResponseExtensionSchema, value, [...path, EXTENSION_KEY]);
  }
  return { content: [{ type: 'text', text: JSON.stringify(response) }], isError: false };
}

// ---- Writing ----

function fromIR(input: Conversation): GeminiHistory {
  const conversation = checkedConversation(input);
  const ledger = new CallLedger();
  const calls = new CallNames();
  const contents = conversation.messages.map(
    (message, contentIndex): GeminiContent => ({
      role: message.role === 'assistant' ? 'model' : 'user',
      parts: message.blocks.map((block, partIndex) => partFromIR(block, { contentIndex, partIndex, ledger, calls })),
    }),
  );
  return conversation.system === undefined ? { contents } : { systemInstruction: { parts: [{ text: conversation.system }] }, contents };
}

function partFromIR(block: Block, at: Position): GeminiPart {
  switch (block.type) {
    case 'text':
      return { text: block.text };
    case 'reasoning':
      return block.signature === undefined ? { text: block.text, thought: true } : { text: block.text, thought: true, thoughtSignature: block.signature };
    case 'image':
      return imagePart(block.source);
    case 'toolCall': {
      const omitId = block.id === positionalCallId(at.contentIndex, at.partIndex);
      at.ledger.addCall(block.id, block.name, !omitId);
      at.calls.record(block.id, block.name);
      return { functionCall: { ...(omitId ? {} : { id: block.id }), name: block.name, args: block.arguments } };
    }
    case 'toolResult': {
      const name = block.name ?? at.calls.nameOf(block.callId) ?? '';
      const omitId = at.ledger.mayOmitResponseId(block.callId, name, at.contentIndex, at.partIndex);
      at.ledger.settle(omitId ? undefined : block.callId, name, at.contentIndex, at.partIndex);
      return { functionResponse: { ...(omitId ? {} : { id: block.callId }), name, response: responseFromIR(block.content, block.isError) } };
    }
  }
}

function imagePart(source: ImageSource): GeminiPart {
  if (source.type === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  return { fileData: { ...(source.mediaType === undefined ? {} : { mimeType: source.mediaType }), fileUri: source.url } };
}

function responseFromIR(content: readonly ResultContentBlock[], isError: boolean): JsonObject {
  const [only] = content;
  if (content.length !== 1 || only?.type !== 'text') return { [EXTENSION_KEY]: { content: JSON.parse(JSON.stringify(content)) as JsonValue, isError } };
  if (isError) return { error: only.text };
  const object = objectSpelledExactlyBy(only.text);
  return object !== undefined && !isWrapperShaped(object) ? object : { output: only.text };
}

/** An object the reader would unwrap rather than take as a tool's own JSON output. */
function isWrapperShaped(object: JsonObject): boolean {
  const keys = Object.keys(object);
  const [key] = keys;
  if (keys.length !== 1 || key === undefined) return false;
  return key === EXTENSION_KEY || ((key === 'output' || key === 'error') && typeof object[key] === 'string');
}

export const geminiAdapter: HistoryAdapter<GeminiHistory> = { provider: 'gemini', toIR, fromIR };
