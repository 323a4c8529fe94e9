/**
 * One observed editor session: who talked to whom (the editor and agent as `initialize`
 * announced them), where, its state in words, the journal's verification badge and the export
 * of its bundle (the same ones a run's timeline has: a session is a run), and four tabs: the
 * conversation (with the plan), the tool calls, the permission requests, and the raw wire.
 */
import { useRef, useState, type KeyboardEvent } from 'react';
import type { SessionSummary, SessionView } from '../../../src-shared/protocol/acp/session-view';
import { CopyButton } from '../components/copy-button';
import { Fact } from '../components/fact';
import { StatusPill } from '../components/status-pill';
import { useNow } from '../components/use-now';
import { count, dateTime, relative } from '../lib/display-format';
import { endedLine, partyLine, SESSION_STATE_LABELS, SESSION_STATE_TONES } from '../lib/acp-display';
import { useApp } from '../store/store-context';
import { AcpConversation } from './acp-conversation';
import { AcpPermissions } from './acp-permission';
import { AcpToolCalls } from './acp-tool-call';
import { AcpWire } from './acp-wire';
import { ExportButton, VerifyBadge } from './run-timeline';

function SessionHeader({ session, view, lastSeq }: { session: SessionSummary; view: SessionView | null; lastSeq: number | null }) {
  const now = useNow();
  return (
    <header className="run-header">
      <div className="run-title">
        <h2>
          {session.tapName} <span className="sub mono">{session.sessionId || 'no session opened yet'}</span>
        </h2>
        <CopyButton value={session.runId} label="Copy the session's run id" />
        <StatusPill tone={SESSION_STATE_TONES[session.state]}>{SESSION_STATE_LABELS[session.state]}</StatusPill>
      </div>
      <dl className="facts facts-inline">
        <Fact label="Editor">{partyLine(session.client)}</Fact>
        <Fact label="Agent">{partyLine(session.agent)}</Fact>
        <Fact label="Working directory">
          <span className="mono">{session.cwd ?? 'not given'}</span>
        </Fact>
        <Fact label="Started" title={dateTime(session.startedAt)}>
          {relative(session.startedAt, now)}
        </Fact>
        <Fact label="Last message" title={dateTime(session.lastAt)}>
          {relative(session.lastAt, now)}
        </Fact>
        <Fact label="Policy">{session.policy === 'inbox' ? 'inbox (permission requests can be answered here)' : 'observe (the editor answers)'}</Fact>
        <Fact label="Run">
          <span className="mono">{session.runId}</span>
        </Fact>
      </dl>
      <dl className="facts facts-inline">
        <Fact label="Prompts">{count(session.counts.prompts)}</Fact>
        <Fact label="Wire messages">{count(session.counts.messages)}</Fact>
        <Fact label="Tool calls">{count(session.counts.toolCalls)}</Fact>
        <Fact label="Permission requests">{count(session.counts.permissions)}</Fact>
        {session.counts.malformed > 0 ? <Fact label="Malformed messages">{count(session.counts.malformed)}</Fact> : null}
        {session.counts.gaps > 0 ? <Fact label="Gaps in the wire">{count(session.counts.gaps)}</Fact> : null}
        {view?.currentModeId ? <Fact label="Mode">{view.currentModeId}</Fact> : null}
        {view?.usage ? (
          <Fact label="Context used">
            {count(view.usage.used)} of {count(view.usage.size)} tokens
            {view.usage.cost ? ` · ${view.usage.cost.amount} ${view.usage.cost.currency}` : ''}
          </Fact>
        ) : null}
      </dl>
      {session.ended ? (
        <p className="muted">
          Ended: {endedLine(session.ended)}.
          {session.ended.stderrTail ? (
            <details>
              <summary>The agent&apos;s last error output</summary>
              <pre tabIndex={0} role="region" aria-label="The agent's last error output">
                {session.ended.stderrTail}
              </pre>
            </details>
          ) : null}
        </p>
      ) : null}
      <div className="run-actions">
        <VerifyBadge lastSeq={lastSeq} />
        <ExportButton runId={session.runId} />
      </div>
    </header>
  );
}

const TABS = [
  { id: 'conversation', label: 'Conversation' },
  { id: 'tools', label: 'Tool calls' },
  { id: 'permissions', label: 'Permission requests' },
  { id: 'wire', label: 'Raw wire' },
] as const;
type TabId = (typeof TABS)[number]['id'];

/** ARIA tabs: one tab stop, arrows (and Home/End) move between tabs and select them. */
function SessionTabs({ selected, onSelect, counts }: { selected: TabId; onSelect(tab: TabId): void; counts: Partial<Record<TabId, number>> }) {
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const at = TABS.findIndex((t) => t.id === selected);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: TABS.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const next = TABS[(to + TABS.length) % TABS.length]!;
    onSelect(next.id);
    refs.current[next.id]?.focus();
  };
  return (
    <div className="tabs" role="tablist" aria-label="Session views" onKeyDown={onKeyDown}>
      {TABS.map((tab) => (
        <button
          key={tab.id}
          ref={(el) => {
            refs.current[tab.id] = el;
          }}
          type="button"
          role="tab"
          id={`acp-tab-${tab.id}`}
          aria-selected={tab.id === selected}
          aria-controls={`acp-panel-${tab.id}`}
          tabIndex={tab.id === selected ? 0 : -1}
          className={`tab${tab.id === selected ? ' tab-selected' : ''}`}
          onClick={() => onSelect(tab.id)}
        >
          {tab.label}
          {counts[tab.id] !== undefined ? <span className="tab-count"> ({count(counts[tab.id]!)})</span> : null}
        </button>
      ))}
    </div>
  );
}

export function AcpSessionPage({ runId }: { runId: string }) {
  const navigate = useApp((s) => s.navigate);
  const view = useApp((s) => (s.acpOpen.runId === runId ? s.acpOpen.view : null));
  const summary = useApp((s) => s.acpSessions.find((x) => x.runId === runId) ?? null);
  const error = useApp((s) => (s.acpOpen.runId === runId ? s.acpOpen.error : null));
  const lastSeq = useApp((s) => (s.acpOpen.runId === runId ? s.acpOpen.lastSeq : null));
  const [tab, setTab] = useState<TabId>('conversation');
  const session = view ?? summary;
  return (
    <div className="timeline-view acp-session">
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <button type="button" className="link-button" onClick={() => navigate({ section: 'acp' })}>
          ← All editor sessions
        </button>
        <span aria-hidden="true"> / </span>
        <span aria-current="page" className="mono">
          {session?.sessionId || runId}
        </span>
      </nav>
      {error ? (
        <p className="inline-error" role="alert">
          Could not read this session: {error}
        </p>
      ) : null}
      {session ? (
        <SessionHeader session={session} view={view} lastSeq={lastSeq} />
      ) : (
        <header className="run-header">
          <h2>
            Session <code>{runId}</code>
          </h2>
          <p className="muted">Reading the session…</p>
        </header>
      )}
      <SessionTabs
        selected={tab}
        onSelect={setTab}
        counts={view ? { tools: view.toolCalls.length, permissions: view.permissions.length } : {}}
      />
      <div role="tabpanel" id={`acp-panel-${tab}`} aria-labelledby={`acp-tab-${tab}`} className="tab-panel" tabIndex={tab === 'wire' ? -1 : 0}>
        {tab === 'wire' ? (
          <AcpWire runId={runId} />
        ) : !view ? (
          <p className="muted">Reading the session…</p>
        ) : tab === 'conversation' ? (
          <AcpConversation view={view} />
        ) : tab === 'tools' ? (
          <AcpToolCalls view={view} />
        ) : (
          <AcpPermissions view={view} />
        )}
      </div>
    </div>
  );
}
