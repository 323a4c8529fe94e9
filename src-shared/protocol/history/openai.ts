/**
 * OpenAI Chat Completions history <-> IR: the OpenAI family's reader, and its writer with
 * `image_url` parts for user images and reasoning kept under the extension key (the Chat
 * Completions wire has no reasoning field). The mapping is documented in openai-family.ts.
 */
import { checkedConversation, type HistoryAdapter } from './adapter';
import { openAiFamilyFromIR, openAiFamilyToIR, type OpenAiDialect, type OpenAiHistory } from './openai-family';

export const OPENAI_DIALECT: OpenAiDialect = { imageParts: true, reasoning: 'extension' };

export const openAiAdapter: HistoryAdapter<OpenAiHistory> = {
  provider: 'openai',
  toIR: openAiFamilyToIR,
  fromIR: (conversation) => openAiFamilyFromIR(checkedConversation(conversation), OPENAI_DIALECT),
};
