/**
 * Editor sessions: the ACP sessions the plane observed between an editor and an agent through
 * `agentplane acp tap`, live (acp-slice.ts), newest first; a session opens as its page
 * (acp-session.tsx). With none yet, the section says how to put the tap between an editor and
 * an agent, with the demo command and Zed's settings snippet to copy.
 */
import { useEffect, useMemo } from 'react';
import { CopyButton } from '../components/copy-button';
import { StatusPill } from '../components/status-pill';
import { useNow } from '../components/use-now';
import { count, relative } from '../lib/display-format';
import { partyLine, SESSION_STATE_LABELS, SESSION_STATE_TONES } from '../lib/acp-display';
import { shellLine } from '../lib/mcp-snippets';
import { ACP_LIST_LIMIT } from '../store/acp-slice';
import { useApp } from '../store/store-context';
import { AcpSessionPage } from './acp-session';

/**
 * The commands as they run from the AgentPlane folder (`agentplane` is on no PATH until `npm
 * link`), journaling into this plane's data dir (`--data-dir`; without it the tap finds another).
 */
export function acpCommands(dataDir: string | undefined) {
  const dir = dataDir ? ['--data-dir', dataDir] : [];
  return {
    tap: `${shellLine(['npx', 'agentplane', 'acp', 'tap', ...dir])} -- <agent command>`,
    demo: shellLine(['npx', 'agentplane', 'acp', 'demo', ...dir]),
    zed: `{
  "agent_servers": {
    "My agent via AgentPlane": {
      "command": "agentplane",
      "args": [${['acp', 'tap', ...dir, '--name', 'my-agent', '--', 'my-agent', '--acp'].map((a) => JSON.stringify(a)).join(', ')}]
    }
  }
}`,
  };
}

function CommandLine({ text, label }: { text: string; label: string }) {
  return (
    <div className="command-line">
      <code>{text}</code>
      <CopyButton value={text} label={label} />
    </div>
  );
}

function AcpEmpty({ empty }: { empty: string }) {
  const commands = acpCommands(useApp((s) => s.status?.dataDir));
  return (
    <section className="empty-state acp-empty" aria-labelledby="acp-empty-heading">
      <h2 id="acp-empty-heading">Connect an editor</h2>
      <p>{empty}</p>
      <p>
        Point your editor at the tap instead of at the agent: the editor starts the tap, the tap starts the agent and relays every message both ways, and
        each one is journaled here as it passes.
      </p>
      <CommandLine text={commands.tap} label="Copy the tap command" />
      <p>To see it work without an editor, run the demo: a scripted editor and agent talking through the tap.</p>
      <CommandLine text={commands.demo} label="Copy the demo command" />
      <h3>Zed</h3>
      <p>
        Add an agent server to Zed&apos;s <code>settings.json</code>, with your agent&apos;s command after <code>--</code>. Zed runs <code>agentplane</code> from its PATH:{' '}
        <code>npm link</code> in the AgentPlane folder puts it there.
      </p>
      <div className="json-block">
        <div className="json-block-bar">
          <span className="json-block-label">Zed settings: agent_servers</span>
          <CopyButton value={commands.zed} label="Copy the Zed settings snippet" />
        </div>
        <pre tabIndex={0} role="region" aria-label="Zed settings snippet">
          {commands.zed}
        </pre>
      </div>
    </section>
  );
}

function AcpSessionsList({ empty }: { empty: string }) {
  const sessions = useApp((s) => s.acpSessions);
  const loaded = useApp((s) => s.acpLoaded);
  const error = useApp((s) => s.acpError);
  const navigate = useApp((s) => s.navigate);
  const now = useNow();
  const sorted = useMemo(() => [...sessions].sort((a, b) => b.startedAt.localeCompare(a.startedAt)), [sessions]);

  if (error && !loaded) return <p className="inline-error" role="alert">Could not list editor sessions: {error}</p>;
  if (!loaded) return <p className="muted">Loading editor sessions…</p>;
  if (sorted.length === 0) return <AcpEmpty empty={empty} />;
  return (
    <>
      <p className="toolbar-summary" aria-live="polite">
        {count(sorted.length)} {sorted.length === 1 ? 'session' : 'sessions'}
        {sorted.length >= ACP_LIST_LIMIT ? ` (the latest ${ACP_LIST_LIMIT})` : ''}.
        {error ? <span className="inline-error"> Could not refresh: {error}</span> : null}
      </p>
      <div className="table-wrap">
        <table className="table acp-table">
          <caption className="visually-hidden">Editor sessions</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Editor</th>
              <th scope="col">Agent</th>
              <th scope="col">Working directory</th>
              <th scope="col">Started</th>
              <th scope="col">State</th>
              <th scope="col" className="num">
                Prompts
              </th>
              <th scope="col" className="num">
                Tool calls
              </th>
              <th scope="col" className="num">
                Permission requests
              </th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((session) => (
              <tr key={session.runId} className={session.state === 'waiting' ? 'row-attention' : undefined}>
                <th scope="row">
                  <button
                    type="button"
                    className="link-button"
                    aria-label={`Open session ${session.tapName} ${session.sessionId || session.runId}`}
                    onClick={() => navigate({ section: 'acp', runId: session.runId })}
                  >
                    {session.tapName}
                  </button>
                  <span className="sub mono">{session.sessionId || session.runId}</span>
                </th>
                <td>{partyLine(session.client)}</td>
                <td>{partyLine(session.agent)}</td>
                <td className="mono acp-cwd" title={session.cwd ?? undefined}>
                  {session.cwd ?? '—'}
                </td>
                <td title={session.startedAt}>{relative(session.startedAt, now)}</td>
                <td>
                  <StatusPill tone={SESSION_STATE_TONES[session.state]}>{SESSION_STATE_LABELS[session.state]}</StatusPill>
                  {session.policy === 'inbox' ? <span className="sub">policy: inbox</span> : null}
                </td>
                <td className="num">{count(session.counts.prompts)}</td>
                <td className="num">{count(session.counts.toolCalls)}</td>
                <td className="num">{count(session.counts.permissions)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function AcpSection({ empty }: { empty: string }) {
  const openRunId = useApp((s) => (s.route.section === 'acp' ? s.route.runId : null));
  const touchAcpSessions = useApp((s) => s.touchAcpSessions);
  const stale = useApp((s) => s.acpStale);
  // The list is shown: read it if it was never read or missed changes while hidden.
  useEffect(() => {
    if (!openRunId) touchAcpSessions();
  }, [touchAcpSessions, stale, openRunId]);
  if (openRunId) return <AcpSessionPage runId={openRunId} />;
  return (
    <div className="section-body">
      <AcpSessionsList empty={empty} />
    </div>
  );
}
