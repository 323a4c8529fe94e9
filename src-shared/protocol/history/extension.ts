/**
 * The one namespaced key under which an adapter keeps what its wire format cannot say.
 *
 * Translation is lossless, and the four formats are not equally expressive: OpenAI has no
 * reasoning and no error flag on a tool result, DeepSeek has no image parts, Claude has no
 * media type on a URL image, and so on. Where the native format has a field for something,
 * the adapter uses it; only where it has none does the adapter write an `x-agentplane`
 * member, on the smallest enclosing object (a content part before a message), holding just
 * the missing facts. A history that needs none (plain text, tool calls and results, images
 * where the format has them) comes out with none, exactly as a client of that API writes it.
 *
 * Where each adapter writes one, and what it holds:
 *
 * | format          | on                              | members                                   |
 * |-----------------|---------------------------------|-------------------------------------------|
 * | claude          | `image` block (url source)      | `mediaType`                               |
 * | claude          | `tool_result` block             | `name` (a result whose name is not its call's) |
 * | openai/deepseek | message                         | `join`, `split` (IR message boundaries), `isError` (tool), `reasoning` (openai), `reasoningSignature` (deepseek) |
 * | openai          | `image_url` part                | `mediaType` (url images)                   |
 * | openai/deepseek | `text` part                     | `image` (an image the wire cannot carry here; the part's text is a placeholder for a model reading the wire) |
 * | gemini          | inside `functionResponse.response` | `content`, `isError` (a result that is not one text) |
 *
 * Provider APIs that validate strictly (Anthropic, OpenAI) reject unknown members, so a
 * history that carries one must have it stripped before it is sent to that provider; what
 * stripping loses is exactly what that provider could not have been told anyway. Readers
 * treat the member as authoritative: the placeholder text of an image part is ignored.
 */
export const EXTENSION_KEY = 'x-agentplane' as const;
