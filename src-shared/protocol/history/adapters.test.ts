/**
 * The adapters one corner at a time: the bugs docs/PEER-PROTOCOL.md lists for the original translator
 * (Claude's `content[0]`, OpenAI arguments), tool-call ids and names, turn boundaries,
 * system prompts, empty content, images, and every refusal with the path it names.
 */
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from './adapter';
import { claudeAdapter, type ClaudeHistory } from './claude';
import { deepSeekAdapter } from './deepseek';
import { HistoryErrorCode, HistoryTranslationError } from './errors';
import { geminiAdapter } from './gemini';
import type { Conversation } from './ir';
import { openAiAdapter } from './openai';
import { translateHistory } from './translate-history';

function refusalOf(run: () => unknown): HistoryTranslationError {
  try {
    run();
  } catch (error) {
    if (error instanceof HistoryTranslationError) return error;
    throw error;
  }
  throw new Error('expected a HistoryTranslationError, but the call succeeded');
}

function expectInvalid(run: () => unknown, ...fragments: string[]): void {
  const error = refusalOf(run);
  expect(error.code).toBe(HistoryErrorCode.InvalidHistory);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
}

/** Claude -> every other format -> Claude gives `history` back. */
function expectClaudeRoundTrips(history: ClaudeHistory): void {
  for (const to of PROVIDERS) {
    const there = translateHistory({ from: 'claude', to, messages: history });
    expect(translateHistory({ from: to, to: 'claude', messages: JSON.parse(JSON.stringify(there)) as unknown }), `via ${to}`).toEqual(history);
  }
}

const call = (id: string, name: string, input: Record<string, unknown> = {}) => ({ type: 'tool_use' as const, id, name, input: input as never });

describe('claude: every block of a message, in order (the content[0] regression)', () => {
  const textAndCall: ClaudeHistory = {
    messages: [
      { role: 'user', content: 'Find the report.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Searching now.' }, call('toolu_1', 'search', { q: 'report' })] },
    ],
  };

  it('keeps the text and the tool_use of one turn', () => {
    expect(claudeAdapter.toIR(textAndCall).messages[1]).toEqual({
      role: 'assistant',
      blocks: [
        { type: 'text', text: 'Searching now.' },
        { type: 'toolCall', id: 'toolu_1', name: 'search', arguments: { q: 'report' } },
      ],
    });
    expect(translateHistory({ from: 'claude', to: 'openai', messages: textAndCall })[1]).toEqual({
      role: 'assistant',
      content: 'Searching now.',
      tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'search', arguments: '{"q":"report"}' } }],
    });
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: textAndCall }).contents[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Searching now.' }, { functionCall: { id: 'toolu_1', name: 'search', args: { q: 'report' } } }],
    });
    expectClaudeRoundTrips(textAndCall);
  });

  it('keeps the order when text follows a tool call (OpenAI writes a joined second message)', () => {
    const history: ClaudeHistory = {
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [call('toolu_1', 'search'), { type: 'text', text: 'and meanwhile...' }, { type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'text', text: 'done' }],
        },
      ],
    };
    const openai = translateHistory({ from: 'claude', to: 'openai', messages: history });
    expect(openai.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'search', arguments: '{}' } }] },
      { role: 'assistant', content: 'and meanwhile...', 'x-agentplane': { join: true } },
      { role: 'assistant', content: 'done', 'x-agentplane': { join: true, reasoning: { text: 'hm', signature: 's' } } },
    ]);
    expectClaudeRoundTrips(history);
  });

  it('a user turn mixing tool results and text is one IR tool message, in every format', () => {
    const history: ClaudeHistory = {
      messages: [
        { role: 'assistant', content: [call('toolu_1', 'search')] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'three hits' },
            { type: 'text', text: 'Only use the first.' },
          ],
        },
      ],
    };
    expect(claudeAdapter.toIR(history).messages[1]?.role).toBe('tool');
    expect(translateHistory({ from: 'claude', to: 'openai', messages: history }).slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'three hits' },
      { role: 'user', content: 'Only use the first.', 'x-agentplane': { join: true } },
    ]);
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: history }).contents[1]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id: 'toolu_1', name: 'search', response: { output: 'three hits' } } }, { text: 'Only use the first.' }],
    });
    expectClaudeRoundTrips(history);
  });

  it('refuses a malformed block naming its path', () => {
    const history = {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'tool_call', id: 'x' }] },
      ],
    };
    expectInvalid(() => claudeAdapter.toIR(history), "messages.3.content.1.type: Invalid discriminator value. Expected 'text' | 'image' | 'tool_use' | 'tool_result' | 'thinking'");
    expectInvalid(() => claudeAdapter.toIR(history.messages), 'messages.3.content.1.type');
  });

  it('refuses blocks in the wrong role, unknown fields, and input that is not an object', () => {
    expectInvalid(() => claudeAdapter.toIR([{ role: 'user', content: [{ type: 'text', text: 'a' }, call('t', 'f')] }]), 'messages.0.content.1.type: a user message cannot hold a tool_use block');
    expectInvalid(
      () => claudeAdapter.toIR([{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }]),
      'messages.0.content.0.type: a assistant message cannot hold a tool_result block',
    );
    expectInvalid(() => claudeAdapter.toIR([{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }] }]), 'messages.0.content.0: Unrecognized key: "cache_control"');
    expectInvalid(() => claudeAdapter.toIR([{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{"a":1}' }] }]), 'messages.0.content.0.input: expected a JSON object');
    expectInvalid(() => claudeAdapter.toIR([{ role: 'user', content: 5 }]), 'messages.0.content: Invalid input: expected string or array');
    expectInvalid(
      () => claudeAdapter.toIR([{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'application/pdf', data: 'AA' } }] }]),
      'messages.0.content.0.source.media_type: expected an image media type',
    );
  });
});

describe('openai: arguments are a JSON string on the wire', () => {
  const withArguments = (args: unknown): unknown => [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: args } }] },
  ];
  const irArguments = (history: unknown): unknown => {
    const block = openAiAdapter.toIR(history).messages[1]?.blocks[0];
    return block?.type === 'toolCall' ? block.arguments : undefined;
  };

  it('decodes a JSON string', () => {
    expect(irArguments(withArguments('{"city": "Paris", "days": [1, 2]}'))).toEqual({ city: 'Paris', days: [1, 2] });
  });

  it('tolerates an already-decoded object, and writes the string back', () => {
    const history = withArguments({ city: 'Paris' });
    expect(irArguments(history)).toEqual({ city: 'Paris' });
    expect(translateHistory({ from: 'openai', to: 'openai', messages: history })[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
  });

  it('refuses malformed JSON naming the message and the call, never turning it into {}', () => {
    for (const to of PROVIDERS) {
      expectInvalid(
        () => translateHistory({ from: 'openai', to, messages: withArguments('{"city": "Par') }),
        'messages.1.tool_calls.0.function.arguments: the arguments of call "call_9" to "get_weather" are not valid JSON',
        '"{\\"city\\": \\"Par"',
      );
    }
  });

  it('refuses JSON that is not an object, an empty string, a missing field, and a rounded big integer', () => {
    expectInvalid(() => openAiAdapter.toIR(withArguments('[1,2]')), 'are JSON but not a JSON object (an array)');
    expectInvalid(() => openAiAdapter.toIR(withArguments('null')), 'are JSON but not a JSON object (null)');
    expectInvalid(() => openAiAdapter.toIR(withArguments('')), 'are not valid JSON');
    expectInvalid(() => openAiAdapter.toIR(withArguments(undefined)), 'must be a JSON string or an already-decoded JSON object, not missing');
    expectInvalid(() => openAiAdapter.toIR(withArguments(42)), 'not a number');
    expectInvalid(() => openAiAdapter.toIR(withArguments('{"id":12345678901234567890}')), 'beyond 2^53 - 1');
  });
});

describe('turn boundaries and consecutive same-role messages', () => {
  it('keeps consecutive same-role messages apart in every format', () => {
    const history: ClaudeHistory = {
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: 'four' },
      ],
    };
    expect(translateHistory({ from: 'claude', to: 'openai', messages: history })).toHaveLength(4);
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: history }).contents).toHaveLength(4);
    expectClaudeRoundTrips(history);
  });

  it('reads consecutive OpenAI tool messages as one turn of results, and marks a real boundary with split', () => {
    const parallel = [
      { role: 'assistant', content: null, tool_calls: [1, 2].map((n) => ({ id: `c${n}`, type: 'function', function: { name: 'f', arguments: '{}' } })) },
      { role: 'tool', tool_call_id: 'c1', content: 'r1' },
      { role: 'tool', tool_call_id: 'c2', content: 'r2' },
    ];
    const claude = translateHistory({ from: 'openai', to: 'claude', messages: parallel });
    expect(claude.messages).toHaveLength(2);
    expect(claude.messages[1]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: 'r1' },
      { type: 'tool_result', tool_use_id: 'c2', content: 'r2' },
    ]);

    const separate: ClaudeHistory = {
      messages: [
        { role: 'assistant', content: [call('c1', 'f'), call('c2', 'f')] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'r1' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'r2' }] },
      ],
    };
    expect(translateHistory({ from: 'claude', to: 'openai', messages: separate })[2]).toEqual({
      role: 'tool',
      tool_call_id: 'c2',
      content: 'r2',
      'x-agentplane': { split: true },
    });
    expectClaudeRoundTrips(separate);
  });

  it('refuses a join with nothing to join, or across the user/assistant divide', () => {
    expectInvalid(() => openAiAdapter.toIR([{ role: 'user', content: 'x', 'x-agentplane': { join: true } }]), 'messages.0.x-agentplane.join: there is no earlier message to join');
    expectInvalid(
      () => openAiAdapter.toIR([{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', 'x-agentplane': { join: true } }]),
      'messages.1.x-agentplane.join: a assistant message cannot join a user message',
    );
  });
});

describe('system prompts', () => {
  it('moves between the top-level field and the first message', () => {
    const claude: ClaudeHistory = { system: 'Be terse.', messages: [{ role: 'user', content: 'hi' }] };
    expect(translateHistory({ from: 'claude', to: 'openai', messages: claude })).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: claude }).systemInstruction).toEqual({ parts: [{ text: 'Be terse.' }] });
    expectClaudeRoundTrips(claude);
  });

  it('tells an empty system prompt from none', () => {
    expectClaudeRoundTrips({ system: '', messages: [] });
    expectClaudeRoundTrips({ messages: [] });
    expect(translateHistory({ from: 'claude', to: 'openai', messages: { messages: [] } })).toEqual([]);
  });

  it('reads developer as system, joins system parts by a blank line, and refuses a system message after the first', () => {
    expect(openAiAdapter.toIR([{ role: 'developer', content: 'Be terse.' }]).system).toBe('Be terse.');
    expect(
      openAiAdapter.toIR([{ role: 'system', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] }]).system,
    ).toBe('A\n\nB');
    expect(claudeAdapter.toIR({ system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }], messages: [] }).system).toBe('A\n\nB');
    expect(geminiAdapter.toIR({ systemInstruction: { role: 'system', parts: [{ text: 'A' }, { text: 'B' }] }, contents: [] }).system).toBe('A\n\nB');
    expectInvalid(
      () => openAiAdapter.toIR([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }, { role: 'system', content: 'late' }]),
      'messages.2.role: a system message is accepted only as the first message',
    );
  });
});

describe('empty content', () => {
  it('keeps an empty string apart from no blocks, in every format', () => {
    const history: ClaudeHistory = {
      messages: [
        { role: 'user', content: '' },
        { role: 'assistant', content: [] },
        { role: 'user', content: [] },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: [call('t1', 'f')] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }, { type: 'tool_result', tool_use_id: 't1', content: '' }] },
      ],
    };
    expect(translateHistory({ from: 'claude', to: 'openai', messages: history })).toEqual([
      { role: 'user', content: '' },
      { role: 'assistant', content: null },
      { role: 'user', content: [] },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't1', content: [] },
      { role: 'tool', tool_call_id: 't1', content: '' },
    ]);
    expectClaudeRoundTrips(history);
  });
});

describe('images', () => {
  it('carries base64 and URL images into tool results, where OpenAI and DeepSeek have no image part', () => {
    const history: ClaudeHistory = {
      messages: [
        { role: 'assistant', content: [call('t1', 'screenshot')] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                { type: 'text', text: 'captured' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
              ],
            },
          ],
        },
      ],
    };
    expect(translateHistory({ from: 'claude', to: 'openai', messages: history })[1]).toEqual({
      role: 'tool',
      tool_call_id: 't1',
      content: [
        { type: 'text', text: 'captured' },
        { type: 'text', text: '[image: image/jpeg]', 'x-agentplane': { image: { type: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' } } },
      ],
    });
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: history }).contents[1]?.parts[0]).toEqual({
      functionResponse: {
        id: 't1',
        name: 'screenshot',
        response: {
          'x-agentplane': {
            content: [
              { type: 'text', text: 'captured' },
              { type: 'image', source: { type: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' } },
            ],
            isError: false,
          },
        },
      },
    });
    expectClaudeRoundTrips(history);
  });

  it('keeps a URL image media type that Claude and OpenAI have no field for', () => {
    const gemini = { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'image/webp', fileUri: 'gs://bucket/cat.webp' } }] }] };
    const openai = translateHistory({ from: 'gemini', to: 'openai', messages: gemini });
    expect(openai).toEqual([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'gs://bucket/cat.webp' }, 'x-agentplane': { mediaType: 'image/webp' } }] },
    ]);
    expect(translateHistory({ from: 'openai', to: 'gemini', messages: openai })).toEqual(gemini);
  });

  it('reads a base64 data URL as base64 wherever it appears, and refuses one that is not an image', () => {
    const claude = claudeAdapter.toIR([{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'data:image/gif;base64,R0lG' } }] }]);
    expect(claude.messages[0]?.blocks[0]).toEqual({ type: 'image', source: { type: 'base64', mediaType: 'image/gif', data: 'R0lG' } });
    expectInvalid(
      () => openAiAdapter.toIR([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBER' } }] }]),
      'messages.0.content.0.image_url.url: a base64 data URL must hold an image media type',
    );
  });

  it('accepts detail "auto" (the default) and refuses the detail levels the IR cannot keep', () => {
    const image = (detail: string): unknown => [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png', detail } }] }];
    expect(openAiAdapter.toIR(image('auto')).messages[0]?.blocks).toEqual([{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }]);
    expectInvalid(() => openAiAdapter.toIR(image('high')), 'messages.0.content.0.image_url.detail');
  });
});

describe('deepseek', () => {
  it('maps reasoning_content to reasoning and keeps a signature it has no field for', () => {
    const claude: ClaudeHistory = {
      messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'think', signature: 'sig' }, { type: 'text', text: 'answer' }] }],
    };
    expect(translateHistory({ from: 'claude', to: 'deepseek', messages: claude })).toEqual([
      { role: 'assistant', content: 'answer', reasoning_content: 'think', 'x-agentplane': { reasoningSignature: 'sig' } },
    ]);
    expect(deepSeekAdapter.toIR([{ role: 'assistant', content: 'a', reasoning_content: null }]).messages[0]?.blocks).toEqual([{ type: 'text', text: 'a' }]);
    expectClaudeRoundTrips(claude);
  });

  it('refuses reasoning given twice', () => {
    expectInvalid(
      () => deepSeekAdapter.toIR([{ role: 'assistant', content: 'a', reasoning_content: 'x', 'x-agentplane': { reasoning: { text: 'y' } } }]),
      'messages.0.x-agentplane.reasoning: reasoning is given twice',
    );
  });
});

describe('gemini: ids and names', () => {
  it('pairs id-less responses with the earliest open call of that name, and settles an explicit id first', () => {
    const gemini = {
      contents: [
        {
          role: 'model',
          parts: [{ functionCall: { id: 'a', name: 'f', args: {} } }, { functionCall: { id: 'b', name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'a', name: 'f', response: { output: 'A' } } },
            { functionResponse: { name: 'g', response: { output: 'G' } } },
            { functionResponse: { name: 'f', response: { output: 'B' } } },
          ],
        },
      ],
    };
    const ids = geminiAdapter.toIR(gemini).messages[1]?.blocks.map((block) => (block.type === 'toolResult' ? block.callId : undefined));
    expect(ids).toEqual(['a', 'gemini-call-0-2', 'b']);
    // Through Claude and back, a response echoes its call's id wherever the call has one.
    const claude = translateHistory({ from: 'gemini', to: 'claude', messages: gemini });
    const back = translateHistory({ from: 'claude', to: 'gemini', messages: claude });
    expect(back.contents[1]?.parts.map((part) => part.functionResponse?.id)).toEqual(['a', undefined, 'b']);
    expect(geminiAdapter.toIR(back)).toEqual(geminiAdapter.toIR(gemini));
  });

  it('writes a response id when name order would pair it with the wrong call', () => {
    // Gemini's own ids: the calls have none, so a response carries one only where needed.
    const gemini = {
      contents: [
        { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'f', args: {} } }] },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'gemini-call-0-1', name: 'f', response: { output: 'second' } } },
            { functionResponse: { name: 'f', response: { output: 'first' } } },
          ],
        },
      ],
    };
    const ir = geminiAdapter.toIR(gemini);
    expect(ir.messages[1]?.blocks.map((block) => (block.type === 'toolResult' ? block.callId : undefined))).toEqual(['gemini-call-0-1', 'gemini-call-0-0']);
    expect(geminiAdapter.fromIR(ir)).toEqual(gemini);
    // Ids that came from elsewhere are echoed on every response.
    const claude: ClaudeHistory = {
      messages: [
        { role: 'assistant', content: [call('t1', 'f'), call('t2', 'f')] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't2', content: 'second' },
            { type: 'tool_result', tool_use_id: 't1', content: 'first' },
          ],
        },
      ],
    };
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: claude }).contents[1]?.parts).toEqual([
      { functionResponse: { id: 't2', name: 'f', response: { output: 'second' } } },
      { functionResponse: { id: 't1', name: 'f', response: { output: 'first' } } },
    ]);
    expectClaudeRoundTrips(claude);
  });

  it('gives an orphan response a positional id and keeps its name where the target has no field for it', () => {
    const gemini = { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'late' } } }] }] };
    const claude = translateHistory({ from: 'gemini', to: 'claude', messages: gemini });
    expect(claude.messages[0]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'gemini-result-0-0', content: 'late', 'x-agentplane': { name: 'lookup' } },
    ]);
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: claude })).toEqual(gemini);
    expect(translateHistory({ from: 'gemini', to: 'openai', messages: gemini })).toEqual([
      { role: 'tool', tool_call_id: 'gemini-result-0-0', content: 'late', name: 'lookup' },
    ]);
  });

  it('takes a response name from its call when the source has none, and drops a name equal to the call', () => {
    const openai = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '12:00', name: 'get_time' },
    ];
    expect(translateHistory({ from: 'openai', to: 'gemini', messages: openai }).contents[1]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id: 'c1', name: 'get_time', response: { output: '12:00' } } }],
    });
    expect(openAiAdapter.toIR(openai).messages[1]?.blocks[0]).toEqual({ type: 'toolResult', callId: 'c1', content: [{ type: 'text', text: '12:00' }], isError: false });
  });

  it('reads a response object that is not {output}/{error} as its JSON text, and missing args as {}', () => {
    const gemini = {
      contents: [
        { role: 'model', parts: [{ functionCall: { name: 'f' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 5, unit: 'kg' } } }] },
      ],
    };
    const ir = geminiAdapter.toIR(gemini);
    expect(ir.messages[0]?.blocks[0]).toMatchObject({ arguments: {} });
    expect(ir.messages[1]?.blocks[0]).toMatchObject({ content: [{ type: 'text', text: '{"output":5,"unit":"kg"}' }] });
  });
});

describe('gemini refusals', () => {
  const contents = (role: string, part: unknown): unknown => ({ contents: [{ role, parts: [{ text: 'ok' }, part] }] });

  it('name the part and the field', () => {
    expectInvalid(() => geminiAdapter.toIR(contents('user', { text: 'a', functionCall: { name: 'f' } })), 'contents.0.parts.1: a part holds exactly one of text, inlineData, fileData, functionCall, functionResponse; found text and functionCall');
    expectInvalid(() => geminiAdapter.toIR(contents('user', {})), 'contents.0.parts.1: a part holds exactly one of', 'found none');
    expectInvalid(() => geminiAdapter.toIR(contents('model', { inlineData: { mimeType: 'image/png', data: 'AA' } })), 'contents.0.parts.1.inlineData: a model turn cannot hold an image');
    expectInvalid(() => geminiAdapter.toIR(contents('user', { functionCall: { name: 'f', args: {} } })), 'contents.0.parts.1.functionCall: a user turn cannot hold a function call');
    expectInvalid(() => geminiAdapter.toIR(contents('user', { inlineData: { mimeType: 'application/pdf', data: 'JVBER' } })), 'contents.0.parts.1.inlineData.mimeType: expected an image media type');
    expectInvalid(
      () => geminiAdapter.toIR(contents('model', { functionCall: { name: 'f', args: {} }, thoughtSignature: 'c2ln' })),
      'contents.0.parts.1.thoughtSignature: a thoughtSignature is supported only on a thought part',
    );
    expectInvalid(() => geminiAdapter.toIR(contents('tool', { text: 'x' })), 'contents.0.role');
    expectInvalid(
      () => geminiAdapter.toIR(contents('user', { functionResponse: { name: 'f', response: { 'x-agentplane': { content: 'nope', isError: false } } } })),
      'contents.0.parts.1.functionResponse.response.x-agentplane.content',
    );
  });
});

describe('fromIR validates the IR it is given', () => {
  it('refuses a broken invariant with the IR path', () => {
    const toolCallInUserTurn = {
      messages: [{ role: 'user', blocks: [{ type: 'toolCall', id: 'c', name: 'f', arguments: {} }] }],
    } as unknown as Conversation;
    for (const adapter of [claudeAdapter, openAiAdapter, geminiAdapter, deepSeekAdapter]) {
      expectInvalid(() => adapter.fromIR(toolCallInUserTurn), 'not a valid IR conversation: messages.0.blocks.0.type: a user message holds only text, image blocks, not toolCall');
    }
    const redundantName: Conversation = {
      messages: [
        { role: 'assistant', blocks: [{ type: 'toolCall', id: 'c', name: 'f', arguments: {} }] },
        { role: 'tool', blocks: [{ type: 'toolResult', callId: 'c', name: 'f', content: [], isError: false }] },
      ],
    };
    expectInvalid(() => geminiAdapter.fromIR(redundantName), 'messages.1.blocks.0.name: a result names its function only when the name differs from its call');
  });
});
