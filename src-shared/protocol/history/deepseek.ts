/**
 * DeepSeek chat history <-> IR. DeepSeek speaks the OpenAI Chat Completions format plus
 * `reasoning_content` on assistant messages, and has no image parts on the wire.
 *
 * Images are kept, not refused: each becomes a text part whose text is a short placeholder
 * (`[image: image/png]`, `[image: https://...]`) so a model reading the wire sees that an
 * image was there, and whose `x-agentplane.image` holds the IR image source, from which the
 * reader restores the image in its place. A DeepSeek -> X translation therefore gives X the
 * real image back. The reader is the OpenAI family's (openai-family.ts), so a DeepSeek
 * history that does hold `image_url` parts (written by an OpenAI client) is read too.
 */
import { checkedConversation, type HistoryAdapter } from './adapter';
import { openAiFamilyFromIR, openAiFamilyToIR, type OpenAiDialect, type OpenAiHistory } from './openai-family';

export const DEEPSEEK_DIALECT: OpenAiDialect = { imageParts: false, reasoning: 'reasoning_content' };

export type DeepSeekHistory = OpenAiHistory;

export const deepSeekAdapter: HistoryAdapter<DeepSeekHistory> = {
  provider: 'deepseek',
  toIR: openAiFamilyToIR,
  fromIR: (conversation) => openAiFamilyFromIR(checkedConversation(conversation), DEEPSEEK_DIALECT),
};
