/**
 * A session's conversation in wire order, as the plane folded it: the person's prompts, the
 * agent's messages (its chunks merged), its thoughts (collapsed), tool calls and permission
 * requests as cards, and each turn's end with the agent's stop reason; the agent's current plan
 * above it. Everything here is the observed parties' account, shown as text, never as markup.
 *
 * A long session renders its latest RECENT_ITEMS items; earlier ones are a click away (the
 * raw wire tab has every message, virtualized).
 *
 * A session recorded as evidence (`view.transcript`) reads the same, but its messages,
 * thoughts and plan come from the transcript store beside the journal: the page says so, marks
 * each of them "transcript", and says what the journal left out and how much of it is still kept.
 */
import { useState } from 'react';
import { useApp } from '../store/store-context';
import type { ConversationItem, PlanEntryView, SessionView } from '../../../src-shared/protocol/acp/session-view';
import { JsonBlock } from '../components/json-block';
import { StatusPill } from '../components/status-pill';
import { clockTime, count } from '../lib/display-format';
import { statusLabel, statusTone } from '../lib/acp-display';
import { PermissionCard } from './acp-permission';
import { ContentBlock } from './acp-content-block';
import { ToolCallCard } from './acp-tool-call';

const RECENT_ITEMS = 300;

export function AcpPlan({ plan }: { plan: PlanEntryView[] }) {
  if (plan.length === 0) return null;
  const done = plan.filter((e) => e.status === 'completed').length;
  return (
    <section className="panel acp-plan" aria-labelledby="acp-plan-heading">
      <h3 id="acp-plan-heading">
        Plan <span className="muted">({done} of {plan.length} done)</span>
      </h3>
      <ol className="acp-plan-list">
        {plan.map((entry, i) => (
          <li key={i}>
            <StatusPill tone={statusTone(entry.status)}>{statusLabel(entry.status)}</StatusPill> <span className="acp-plan-text">{entry.content}</span>
            {entry.priority && entry.priority !== 'medium' ? <span className="muted"> · {entry.priority} priority</span> : null}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** What the page says of a session recorded as evidence: where its conversation lives, and what the journal left out. */
function TranscriptNote({ sessionId, transcript }: { sessionId: string; transcript: NonNullable<SessionView['transcript']> }) {
  const leftOut = Object.entries(transcript.leftOut);
  const total = leftOut.reduce((sum, [, n]) => sum + n, 0);
  const erase = useApp((s) => s.eraseAcpTranscript);
  // Erasing asks once more: the lines do not come back.
  const [confirming, setConfirming] = useState(false);
  return (
    <div className="acp-transcript-note" role="note" aria-label="Transcript, not evidence">
      <p>
      <strong>Transcript, not evidence.</strong>
      {` Messages, thoughts and the plan are kept beside the journal for ${count(transcript.retentionDays)} days, not in it.`}
      {` The journal names what it left out: ${leftOut.length === 0 ? 'nothing yet' : leftOut.map(([kind, n]) => `${kind} ${count(n)}`).join(', ')}.`}
      {transcript.kept < total ? ` ${count(total - transcript.kept)} of them are no longer kept (erased or past retention).` : null}
      </p>
      {transcript.kept === 0 || sessionId === '' ? null : confirming ? (
        <p>
          Erase the {count(transcript.kept)} transcript lines of this session? The journal&apos;s evidence stays.{' '}
          <button type="button" className="button small" onClick={() => void erase(sessionId).then(() => setConfirming(false))}>
            Erase
          </button>{' '}
          <button type="button" className="button small" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </p>
      ) : (
        <button type="button" className="button small" onClick={() => setConfirming(true)}>
          Erase transcript…
        </button>
      )}
    </div>
  );
}

const TranscriptTag = ({ view }: { view: SessionView }) => (view.transcript ? <span className="acp-transcript-tag"> · transcript</span> : null);

function Item({ item, view }: { item: ConversationItem; view: SessionView }) {
  const time = <time dateTime={item.at}>{clockTime(item.at)}</time>;
  switch (item.kind) {
    case 'prompt':
      return (
        <li className="acp-item acp-prompt">
          <div className="acp-who">
            <strong>You</strong> (prompt) · {time}
          </div>
          {item.blocks.map((block, i) => (
            <ContentBlock key={i} block={block} />
          ))}
        </li>
      );
    case 'message':
      return (
        <li className="acp-item acp-message">
          <div className="acp-who">
            <strong>Agent</strong> · {time}
            <TranscriptTag view={view} />
          </div>
          <p className="acp-text">{item.text}</p>
        </li>
      );
    case 'thought':
      return (
        <li className="acp-item acp-thought">
          <details>
            <summary>
              Agent&apos;s thought · {time} <span className="muted">({count(item.text.length)} characters)</span>
              <TranscriptTag view={view} />
            </summary>
            <p className="acp-text">{item.text}</p>
          </details>
        </li>
      );
    case 'toolCall': {
      const call = view.toolCalls.find((t) => t.toolCallId === item.toolCallId);
      return <li className="acp-item">{call ? <ToolCallCard call={call} terminals={view.terminals} /> : <p className="muted">Tool call {item.toolCallId}</p>}</li>;
    }
    case 'permission': {
      const permission = view.permissions.find((p) => p.requestKey === item.requestKey);
      return <li className="acp-item">{permission ? <PermissionCard session={view} permission={permission} /> : null}</li>;
    }
    case 'turnEnd':
      return (
        <li className="acp-item acp-turn-end">
          Turn ended · {time} · stop reason <code>{item.stopReason}</code>
        </li>
      );
    case 'unknownUpdate':
      return (
        <li className="acp-item">
          <p className="muted">
            An update this version does not know: <code>{item.update}</code> · {time}
          </p>
          <JsonBlock value={item.raw} label={`Update ${item.update}`} />
        </li>
      );
  }
}

export function AcpConversation({ view }: { view: SessionView }) {
  const [all, setAll] = useState(false);
  const items = view.conversation;
  const hidden = all ? 0 : Math.max(0, items.length - RECENT_ITEMS);
  return (
    <div className="acp-conversation">
      {view.transcript ? <TranscriptNote sessionId={view.sessionId} transcript={view.transcript} /> : null}
      <AcpPlan plan={view.plan} />
      {items.length === 0 ? <p className="muted">No prompt yet: the conversation appears here as the editor and the agent talk.</p> : null}
      {hidden > 0 ? (
        <button type="button" className="button small" onClick={() => setAll(true)}>
          Show {count(hidden)} earlier items
        </button>
      ) : null}
      <ol className="acp-items" aria-label="Conversation">
        {items.slice(hidden).map((item) => (
          <Item key={`${item.kind}-${item.wire}`} item={item} view={view} />
        ))}
      </ol>
    </div>
  );
}
