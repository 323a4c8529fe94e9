/**
 * ACP v1 content as zod schemas: content blocks, tool call content (content, diff, terminal),
 * locations, tool calls and their updates, plan entries. Written from the stable v1 schema the
 * official SDK ships (@agentclientprotocol/sdk 2.4.0, schema/v1/schema.json), not imported from
 * it: a durable record must not move when that package does.
 *
 * Everything is tolerant, because this plane observes a wire it does not own:
 * - every object is `.passthrough()`, so fields a later revision adds survive a parse;
 * - words the observed party owns (tool kind, tool status, plan status and priority) are
 *   strings, not closed enums: a closed vocabulary would be wrong the first time an agent used
 *   a word this build had not heard of;
 * - a content block of a type we do not know parses as the fallback branch, never fails;
 * - any string that may be large (text, data, diff text, file content, terminal output) may
 *   instead be a stand-in `{ "$digest", "$size", "$omitted" }`: the tap journals large content
 *   as its digest and size, in the place of the string.
 */
import { z } from 'zod';

/** What the tap writes in place of a string too large to journal: its sha256 and byte size. */
export const StandInSchema = z
  .object({
    $digest: z.string(),
    $size: z.number(),
    $omitted: z.string(),
  })
  .passthrough();
export type StandIn = z.infer<typeof StandInSchema>;

/** True when `v` is a stand-in for omitted content (see StandInSchema). */
export function isStandIn(v: unknown): v is StandIn {
  return StandInSchema.safeParse(v).success;
}

/** A string the tap may have replaced by a stand-in. */
export const WireTextSchema = z.union([z.string(), StandInSchema]);
export type WireText = z.infer<typeof WireTextSchema>;

/** `null` and absent mean the same on this wire (the Rust reference serializes `None` either way). */
const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

export const TextContentSchema = z.object({ type: z.literal('text'), text: WireTextSchema }).passthrough();
export const ImageContentSchema = z
  .object({ type: z.literal('image'), data: WireTextSchema, mimeType: z.string(), uri: opt(z.string()) })
  .passthrough();
export const AudioContentSchema = z.object({ type: z.literal('audio'), data: WireTextSchema, mimeType: z.string() }).passthrough();
export const ResourceLinkSchema = z
  .object({
    type: z.literal('resource_link'),
    name: z.string(),
    uri: z.string(),
    mimeType: opt(z.string()),
    size: opt(z.number()),
    title: opt(z.string()),
    description: opt(z.string()),
  })
  .passthrough();
export const EmbeddedResourceContentsSchema = z.union([
  z.object({ uri: z.string(), text: WireTextSchema, mimeType: opt(z.string()) }).passthrough(),
  z.object({ uri: z.string(), blob: WireTextSchema, mimeType: opt(z.string()) }).passthrough(),
]);
export const EmbeddedResourceSchema = z.object({ type: z.literal('resource'), resource: EmbeddedResourceContentsSchema }).passthrough();
/** A block whose type this build does not know (or whose known shape is broken): kept raw. */
export const OtherContentSchema = z.object({ type: z.string() }).passthrough();

/** Known blocks first: a union takes the first branch that parses, so the fallback is last. */
export const ContentBlockSchema = z.union([
  TextContentSchema,
  ImageContentSchema,
  AudioContentSchema,
  ResourceLinkSchema,
  EmbeddedResourceSchema,
  OtherContentSchema,
]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

export const ToolCallLocationSchema = z.object({ path: z.string(), line: opt(z.number()) }).passthrough();
export type ToolCallLocation = z.infer<typeof ToolCallLocationSchema>;

export const ToolCallContentSchema = z.union([
  z.object({ type: z.literal('content'), content: ContentBlockSchema }).passthrough(),
  z.object({ type: z.literal('diff'), path: z.string(), oldText: opt(WireTextSchema), newText: WireTextSchema }).passthrough(),
  z.object({ type: z.literal('terminal'), terminalId: z.string() }).passthrough(),
]);
export type ToolCallContent = z.infer<typeof ToolCallContentSchema>;

/**
 * An array whose bad items are dropped rather than failing the whole message, as the v1 schema
 * marks these arrays (`x-deserialize-skip-invalid-items`): one odd location must not hide a
 * tool call.
 */
export function lenientArray<T extends z.ZodType>(item: T) {
  return z.array(z.unknown()).transform((items) =>
    items.flatMap((raw) => {
      const parsed = item.safeParse(raw);
      return parsed.success ? [parsed.data as z.output<T>] : [];
    }),
  );
}

/** Fields a tool call and its updates share; kind and status are the agent's words. */
const toolCallFields = {
  toolCallId: z.string(),
  kind: opt(z.string()),
  status: opt(z.string()),
  content: opt(lenientArray(ToolCallContentSchema)),
  locations: opt(lenientArray(ToolCallLocationSchema)),
  rawInput: z.unknown().optional(),
  rawOutput: z.unknown().optional(),
};

export const ToolCallSchema = z.object({ ...toolCallFields, title: z.string() }).passthrough();
export type ToolCall = z.infer<typeof ToolCallSchema>;
/** Every field but the id is optional: only what changed is sent; content and locations replace. */
export const ToolCallUpdateSchema = z.object({ ...toolCallFields, title: opt(z.string()) }).passthrough();
export type ToolCallUpdate = z.infer<typeof ToolCallUpdateSchema>;

export const PlanEntrySchema = z.object({ content: z.string(), priority: z.string(), status: z.string() }).passthrough();
export type PlanEntry = z.infer<typeof PlanEntrySchema>;

export const AvailableCommandSchema = z
  .object({ name: z.string(), description: z.string(), input: z.unknown().optional() })
  .passthrough();
