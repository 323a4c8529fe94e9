/**
 * A tool call as a card: its kind and title, its status now and every status it went through
 * (with when), the files it touched, and its content: text, edits as unified diffs
 * (lib/unified-diff.ts, bounded so a huge file cannot freeze the window), and the output of a
 * terminal it ran. The diff is computed only when its card is shown (and memoised).
 */
import { useId, useMemo } from 'react';
import type { SessionView, TerminalView, ToolCallView } from '../../../src-shared/protocol/acp/session-view';
import { CopyButton } from '../components/copy-button';
import { JsonBlock } from '../components/json-block';
import { StatusPill } from '../components/status-pill';
import { clockTime, count } from '../lib/display-format';
import { statusLabel, statusTone } from '../lib/acp-display';
import { formatUnifiedDiff, hunkHeader, unifiedDiff } from '../lib/unified-diff';
import { ContentBlock } from './acp-content-block';

export function DiffView({ path, oldText, newText, truncated }: { path: string; oldText: string | null; newText: string; truncated?: boolean }) {
  const diff = useMemo(() => unifiedDiff(oldText, newText), [oldText, newText]);
  const text = useMemo(() => formatUnifiedDiff(path, diff), [path, diff]);
  return (
    <figure className="diff">
      <figcaption className="diff-head">
        <span className="mono">{path}</span>
        {diff.newFile ? <StatusPill tone="info">new file</StatusPill> : null}
        {diff.kind === 'hunks' ? (
          <span className="muted">
            +{count(diff.added)} −{count(diff.removed)}
            {diff.coarse ? ' (shown as one replaced block: too many changes to align line by line)' : ''}
          </span>
        ) : null}
        {truncated ? <StatusPill tone="warn">text truncated in the journal</StatusPill> : null}
        <CopyButton value={text} label={`Copy the diff of ${path}`} />
      </figcaption>
      {diff.kind === 'tooLarge' ? (
        <p className="muted">
          Too large to diff here: {count(diff.oldLines)} lines before, {count(diff.newLines)} after. Copy the diff or export the bundle to read it in full.
        </p>
      ) : diff.hunks.length === 0 ? (
        <p className="muted">No change.</p>
      ) : (
        <pre className="diff-body" tabIndex={0} role="region" aria-label={`Diff of ${path}`}>
          {diff.hunks.map((hunk, h) => (
            <span key={h} className="diff-hunk">
              <span className="diff-line diff-hunk-head">{hunkHeader(hunk)}</span>
              {hunk.lines.map((line, i) => (
                <span key={i} className={`diff-line diff-${line.type}`}>
                  <span className="diff-sign" aria-hidden="true">
                    {line.type === 'add' ? '+' : line.type === 'del' ? '-' : ' '}
                  </span>
                  {line.type === 'add' ? <span className="visually-hidden">added: </span> : line.type === 'del' ? <span className="visually-hidden">removed: </span> : null}
                  {line.text}
                </span>
              ))}
            </span>
          ))}
        </pre>
      )}
    </figure>
  );
}

export function TerminalOutput({ terminal }: { terminal: TerminalView }) {
  const exit = terminal.exitStatus;
  return (
    <div className="terminal">
      <div className="diff-head">
        <span>
          Terminal <code>{terminal.command}</code>
        </span>
        <span className="muted">
          {exit ? (exit.signal ? `ended by signal ${exit.signal}` : `exit code ${exit.exitCode ?? '?'}`) : 'still running'}
          {terminal.truncated ? ' · output truncated' : ''}
        </span>
        <CopyButton value={terminal.output} label={`Copy the output of terminal ${terminal.terminalId}`} />
      </div>
      <pre className="terminal-body" tabIndex={0} role="region" aria-label={`Output of terminal ${terminal.terminalId}`}>
        {terminal.output || '(no output yet)'}
      </pre>
    </div>
  );
}

export function ToolCallCard({ call, terminals }: { call: ToolCallView; terminals: TerminalView[] }) {
  const headingId = useId();
  return (
    <article className="tool-card" aria-labelledby={headingId}>
      <header className="tool-head">
        <span className="tool-kind">{call.toolKind}</span>
        <h4 id={headingId}>{call.title || call.toolCallId}</h4>
        <StatusPill tone={statusTone(call.status)}>{statusLabel(call.status)}</StatusPill>
      </header>
      {call.statusChanges.length > 1 ? (
        <p className="tool-history muted">
          {call.statusChanges.map((c, i) => (
            <span key={i}>
              {i > 0 ? ' → ' : ''}
              {statusLabel(c.status)} <time dateTime={c.at}>{clockTime(c.at)}</time>
            </span>
          ))}
        </p>
      ) : null}
      {call.locations.length > 0 ? (
        <ul className="tool-locations" aria-label="Files">
          {call.locations.map((l, i) => (
            <li key={i} className="mono">
              {l.path}
              {l.line !== undefined ? `:${l.line}` : ''}
            </li>
          ))}
        </ul>
      ) : null}
      {call.content.map((c, i) =>
        c.type === 'content' ? (
          <ContentBlock key={i} block={c.content} />
        ) : c.type === 'diff' ? (
          <DiffView key={i} path={c.path} oldText={c.oldText} newText={c.newText} truncated={c.truncated} />
        ) : (
          <TerminalContent key={i} terminalId={c.terminalId} terminals={terminals} />
        ),
      )}
      {call.rawInput !== undefined || call.rawOutput !== undefined ? (
        <details>
          <summary>Raw input and output</summary>
          {call.rawInput !== undefined ? <JsonBlock value={call.rawInput} label={`Raw input of ${call.toolCallId}`} /> : null}
          {call.rawOutput !== undefined ? <JsonBlock value={call.rawOutput} label={`Raw output of ${call.toolCallId}`} /> : null}
        </details>
      ) : null}
    </article>
  );
}

function TerminalContent({ terminalId, terminals }: { terminalId: string; terminals: TerminalView[] }) {
  const terminal = terminals.find((t) => t.terminalId === terminalId);
  if (!terminal) return <p className="muted">Terminal {terminalId} (no output observed)</p>;
  return <TerminalOutput terminal={terminal} />;
}

export function AcpToolCalls({ view }: { view: SessionView }) {
  if (view.toolCalls.length === 0) return <p className="muted">No tool calls in this session yet.</p>;
  return (
    <div className="stack">
      {view.toolCalls.map((call) => (
        <ToolCallCard key={call.toolCallId} call={call} terminals={view.terminals} />
      ))}
      {view.clientEffects.length > 0 ? (
        <section aria-labelledby="acp-effects-heading">
          <h3 id="acp-effects-heading">Asked of the editor</h3>
          <ul className="plain-list">
            {view.clientEffects.map((e) => (
              <li key={e.wire}>
                <code>{e.method}</code> {e.summary} · <time dateTime={e.at}>{clockTime(e.at)}</time> · {e.result}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}
