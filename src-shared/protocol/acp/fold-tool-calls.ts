/**
 * Tool call cards: a tool_call creates one, a tool_call_update merges into it. As ACP defines
 * updates, only the fields sent change, and content and locations replace the whole collection.
 *
 * An update for an id never announced still makes a card (from what the update says): the
 * tool_call may be behind a gap, and a status the agent reported is evidence worth showing.
 * A second tool_call for a known id merges the same way rather than making a twin card.
 */
import type { ToolCallContent, ToolCallLocation, ToolCallUpdate } from './acp-content';
import { contentViewOf, wireText } from './content-view';
import type { ToolCallView } from './session-view';

function locationsView(locations: ToolCallLocation[]): ToolCallView['locations'] {
  return locations.map((l) => (typeof l.line === 'number' ? { path: l.path, line: l.line } : { path: l.path }));
}

function contentItemView(c: ToolCallContent): ToolCallView['content'][number] {
  if (c.type === 'diff' && 'path' in c) {
    const next = wireText(c.newText);
    const old = c.oldText === null || c.oldText === undefined ? null : wireText(c.oldText);
    const truncated = next.truncated || (old?.truncated ?? false);
    return { type: 'diff', path: c.path, oldText: old?.text ?? null, newText: next.text, ...(truncated ? { truncated } : {}) };
  }
  if (c.type === 'terminal' && 'terminalId' in c) return { type: 'terminal', terminalId: c.terminalId };
  return { type: 'content', content: contentViewOf('content' in c ? c.content : undefined) };
}

/** Merge one tool_call or tool_call_update into the cards; says whether it made a new card. */
export function upsertToolCall(
  cards: ToolCallView[],
  u: ToolCallUpdate,
  wire: number,
  at: string,
): { card: ToolCallView; created: boolean } {
  const existing = cards.find((c) => c.toolCallId === u.toolCallId);
  if (existing === undefined) {
    const status = u.status ?? 'pending';
    const card: ToolCallView = {
      toolCallId: u.toolCallId,
      title: u.title ?? u.toolCallId,
      toolKind: u.kind ?? 'other',
      status,
      statusChanges: [{ status, wire, at }],
      locations: locationsView(u.locations ?? []),
      content: (u.content ?? []).map(contentItemView),
    };
    if (u.rawInput !== undefined) card.rawInput = u.rawInput;
    if (u.rawOutput !== undefined) card.rawOutput = u.rawOutput;
    cards.push(card);
    return { card, created: true };
  }
  if (u.title != null) existing.title = u.title;
  if (u.kind != null) existing.toolKind = u.kind;
  if (u.status != null && u.status !== existing.status) {
    existing.status = u.status;
    existing.statusChanges.push({ status: u.status, wire, at });
  }
  if (u.content != null) existing.content = u.content.map(contentItemView);
  if (u.locations != null) existing.locations = locationsView(u.locations);
  if (u.rawInput !== undefined) existing.rawInput = u.rawInput;
  if (u.rawOutput !== undefined) existing.rawOutput = u.rawOutput;
  return { card: existing, created: false };
}
