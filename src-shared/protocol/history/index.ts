/**
 * Lossless conversation-history translation between Claude, OpenAI, Gemini and DeepSeek
 * formats: the core of the MCPv2 `translate_history` skill. Start at translate-history.ts
 * (the envelope and entry points) and ir.ts (the neutral representation and its invariants).
 */
export { checkedConversation, PROVIDERS, ProviderSchema, type HistoryAdapter, type Provider } from './adapter';
export * from './claude';
export { deepSeekAdapter, DEEPSEEK_DIALECT, type DeepSeekHistory } from './deepseek';
export { describeIssues, HistoryErrorCode, HistoryTranslationError } from './errors';
export { EXTENSION_KEY } from './extension';
export * from './gemini';
export * from './ir';
export { JsonObjectInputSchema, JsonObjectSchema, type JsonObject, type JsonValue } from './json-value';
export { openAiAdapter, OPENAI_DIALECT } from './openai';
export {
  OpenAiContentPartSchema,
  OpenAiHistorySchema,
  OpenAiMessageSchema,
  OpenAiToolCallSchema,
  type OpenAiDialect,
  type OpenAiHistory,
  type OpenAiMessage,
} from './openai-family';
export * from './translate-history';
