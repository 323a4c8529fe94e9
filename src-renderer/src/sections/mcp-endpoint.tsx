/**
 * "This plane as an MCP server": what an MCP host (Claude Desktop, Cursor, VS Code) needs to
 * reach the plane's agents as tools. The endpoint URL and its bearer token for HTTP on loopback,
 * the command a host launches for stdio, the protocol revisions served and the agents offered,
 * and each host's config snippet to copy, over HTTP or stdio.
 *
 * The token is a credential: it is masked until the person asks to see it (a toggle button,
 * aria-pressed), and the snippets shown mask it too; what is copied is always the real value,
 * since a masked token pasted into a host's config would not work.
 */
import { useId, useRef, useState, type KeyboardEvent } from 'react';
import type { McpEndpointView } from '../../../src-shared/protocol/mcp';
import { CopyButton } from '../components/copy-button';
import { MASKED_TOKEN, MCP_HOSTS, MCP_SNIPPET_TRANSPORTS, mcpHostSnippet, shellLine, type McpHostId, type McpSnippetTransport } from '../lib/mcp-snippets';
import { useApp } from '../store/store-context';

/** ARIA tabs for the hosts: one tab stop, arrows (and Home/End) move between hosts and select them. */
function HostTabs({ selected, onSelect, idBase }: { selected: McpHostId; onSelect(host: McpHostId): void; idBase: string }) {
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const at = MCP_HOSTS.findIndex((h) => h.id === selected);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: MCP_HOSTS.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const next = MCP_HOSTS[(to + MCP_HOSTS.length) % MCP_HOSTS.length]!;
    onSelect(next.id);
    refs.current[next.id]?.focus();
  };
  return (
    <div className="tabs" role="tablist" aria-label="MCP hosts" onKeyDown={onKeyDown}>
      {MCP_HOSTS.map((host) => (
        <button
          key={host.id}
          ref={(el) => {
            refs.current[host.id] = el;
          }}
          type="button"
          role="tab"
          id={`${idBase}-tab-${host.id}`}
          aria-selected={host.id === selected}
          aria-controls={`${idBase}-panel`}
          tabIndex={host.id === selected ? 0 : -1}
          className={`tab${host.id === selected ? ' tab-selected' : ''}`}
          onClick={() => onSelect(host.id)}
        >
          {host.label}
        </button>
      ))}
    </div>
  );
}

function HostSnippets({ endpoint, revealToken }: { endpoint: McpEndpointView; revealToken: boolean }) {
  const idBase = useId();
  const [host, setHost] = useState<McpHostId>('claude-desktop');
  const [transport, setTransport] = useState<McpSnippetTransport>(endpoint.url === null ? 'stdio' : 'http');
  const hostLabel = MCP_HOSTS.find((h) => h.id === host)!.label;
  const shown = mcpHostSnippet(endpoint, host, transport, { revealToken });
  const copied = mcpHostSnippet(endpoint, host, transport, { revealToken: true });
  const transportLabel = transport === 'http' ? 'HTTP' : 'stdio';
  return (
    <div className="stack">
      <h3>Add it to a host</h3>
      <HostTabs selected={host} onSelect={setHost} idBase={idBase} />
      <div className="tab-panel" role="tabpanel" id={`${idBase}-panel`} aria-labelledby={`${idBase}-tab-${host}`}>
        {/* The wrapper takes the panel's width, so the switch keeps its own. */}
        <div>
          <div className="segmented" role="radiogroup" aria-label={`How ${hostLabel} reaches the plane`}>
            {MCP_SNIPPET_TRANSPORTS.map((t) => (
              <label key={t.id} className={transport === t.id ? 'segment segment-on' : 'segment'}>
                <input type="radio" name={`${idBase}-transport`} value={t.id} checked={transport === t.id} onChange={() => setTransport(t.id)} />
                {t.label}
              </label>
            ))}
          </div>
        </div>
        {shown && copied ? (
          <>
            <p className="muted">
              Merge this into <code>{shown.file}</code>
              {transport === 'http' ? ': the host connects to the running plane with its token.' : ': the host starts the plane’s MCP server itself and talks to it over stdin and stdout.'}
            </p>
            <div className="json-block">
              <div className="json-block-bar">
                <span className="json-block-label">
                  {hostLabel}, {transportLabel}: {shown.file}
                </span>
                <CopyButton value={copied.text} label={`Copy the ${hostLabel} ${transportLabel} config`} />
              </div>
              <pre tabIndex={0} role="region" aria-label={`${hostLabel} ${transportLabel} config`}>
                {shown.text}
              </pre>
            </div>
          </>
        ) : (
          <p className="muted">This plane is not serving MCP over HTTP, so there is no URL to give {hostLabel}; use stdio, or serve the plane with MCP over HTTP.</p>
        )}
      </div>
    </div>
  );
}

function TokenLine({ token, revealed, onToggle }: { token: string; revealed: boolean; onToggle(): void }) {
  return (
    <span className="command-line">
      {revealed ? (
        <code>{token}</code>
      ) : (
        <>
          <code aria-hidden="true">{MASKED_TOKEN}</code>
          <span className="visually-hidden">hidden</span>
        </>
      )}
      <button type="button" className="button small ghost" aria-pressed={revealed} onClick={onToggle}>
        {revealed ? 'Hide token' : 'Show token'}
      </button>
      <CopyButton value={token} label="Copy the bearer token" />
    </span>
  );
}

export function McpEndpointPanel() {
  const headingId = useId();
  const endpoint = useApp((s) => s.mcpEndpoint);
  const error = useApp((s) => s.mcpEndpointError);
  const [revealed, setRevealed] = useState(false);
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>This plane as an MCP server</h2>
      {!endpoint ? (
        error ? (
          <p className="inline-error" role="alert">
            Could not read the plane’s MCP endpoint: {error}
          </p>
        ) : (
          <p className="muted">Reading the plane’s MCP endpoint…</p>
        )
      ) : (
        <>
          <p className="muted">MCP hosts see each of the plane’s agents as a tool. A call starts a run with its approvals, budget and journal in force, exactly like one started here.</p>
          {error ? <p className="inline-error">Could not refresh: {error}</p> : null}
          <dl className="facts">
            <dt>Endpoint</dt>
            <dd>
              {endpoint.url === null ? (
                <span>not serving over HTTP</span>
              ) : (
                <span className="command-line">
                  <code>{endpoint.url}</code>
                  <CopyButton value={endpoint.url} label="Copy the endpoint URL" />
                </span>
              )}
            </dd>
            {endpoint.token !== null ? (
              <>
                <dt>Bearer token</dt>
                <dd>
                  <TokenLine token={endpoint.token} revealed={revealed} onToggle={() => setRevealed((r) => !r)} />
                </dd>
              </>
            ) : null}
            <dt>stdio command</dt>
            <dd>
              <span className="command-line">
                <code>{shellLine(endpoint.stdioCommand)}</code>
                <CopyButton value={shellLine(endpoint.stdioCommand)} label="Copy the stdio command" />
              </span>
              {endpoint.stdioCommand[0] === 'agentplane' ? (
                <span className="muted">
                  {' '}
                  A host runs <code>agentplane</code> from its PATH: <code>npm link</code> in the AgentPlane folder puts it there.
                </span>
              ) : null}
            </dd>
            <dt>Revisions served</dt>
            <dd>{endpoint.versions.length === 0 ? 'none' : `${endpoint.versions.join(', ')} (preferred first)`}</dd>
            <dt>Agents offered as tools</dt>
            <dd>
              {endpoint.tools.length === 0 ? (
                <span className="muted">none</span>
              ) : (
                endpoint.tools.map((t, i) => (
                  <span key={t}>
                    {i > 0 ? ', ' : null}
                    <code>{t}</code>
                  </span>
                ))
              )}
            </dd>
          </dl>
          <HostSnippets endpoint={endpoint} revealToken={revealed} />
        </>
      )}
    </section>
  );
}
