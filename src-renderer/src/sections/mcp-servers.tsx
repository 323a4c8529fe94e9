/**
 * "MCP servers your agents can call": each server declared in the data dir's mcp-servers.json,
 * as the plane shows it: how it is reached, its connection state in words, the protocol
 * revision the handshake settled on (readable, because a downgrade costs silence: an older
 * server simply never offers what a newer revision adds), the server's own name and version,
 * why it failed in its own words, and its recent stderr. Connected, it lists its tools (with
 * their input schemas), prompts and resources: what it advertises, which is never a grant (a
 * manifest names each tool an agent may call).
 *
 * Only the names of a server's environment variables and headers are shown; the plane never
 * sends their values.
 */
import { useEffect, useId, useState } from 'react';
import { MCP_PROTOCOL_VERSIONS, type McpServerView } from '../../../src-shared/protocol/mcp';
import { EmptyState } from '../components/empty-state';
import { Fact } from '../components/fact';
import { JsonBlock } from '../components/json-block';
import { StatusPill, type Tone } from '../components/status-pill';
import { shellLine } from '../lib/mcp-snippets';
import { useApp } from '../store/store-context';
import { McpServerForm } from './mcp-server-form';

const STATE_WORDS: Record<McpServerView['state'], [label: string, tone: Tone]> = {
  disconnected: ['Disconnected', 'plain'],
  connecting: ['Connecting…', 'busy'],
  connected: ['Connected', 'ok'],
  failed: ['Failed', 'bad'],
};

function Names({ names, what }: { names: string[]; what: string }) {
  return (
    <>
      {names.map((n, i) => (
        <span key={n}>
          {i > 0 ? ', ' : null}
          <code>{n}</code>
        </span>
      ))}
      <span className="muted"> ({what} not shown)</span>
    </>
  );
}

function RevisionFact({ version }: { version: string }) {
  const preferred = MCP_PROTOCOL_VERSIONS[0];
  return (
    <Fact label="Protocol revision">
      <code>{version}</code>
      {version !== preferred ? <span className="muted"> (older than {preferred}, which this plane prefers: what newer revisions add is absent)</span> : null}
    </Fact>
  );
}

function ServerActions({ server }: { server: McpServerView }) {
  const busy = useApp((s) => s.mcpBusy[server.name]);
  const error = useApp((s) => s.mcpActionErrors[server.name]);
  const act = useApp((s) => s.mcpServerAction);
  const [confirming, setConfirming] = useState(false);
  const live = server.state === 'connected' || server.state === 'connecting';
  return (
    <div className="danger-zone">
      {live ? (
        <button type="button" className="button small" disabled={busy !== undefined} onClick={() => void act(server.name, 'disconnect')} aria-label={`Disconnect ${server.name}`}>
          {busy === 'disconnect' ? 'Disconnecting…' : 'Disconnect'}
        </button>
      ) : (
        <button type="button" className="button small primary" disabled={busy !== undefined} onClick={() => void act(server.name, 'connect')} aria-label={`${server.state === 'failed' ? 'Retry connecting' : 'Connect'} ${server.name}`}>
          {busy === 'connect' ? 'Connecting…' : server.state === 'failed' ? 'Retry connecting' : 'Connect'}
        </button>
      )}
      {confirming ? (
        <>
          <span>Remove {server.name}? Agents granted its tools will fail to call them.</span>
          <button type="button" className="button small danger" disabled={busy !== undefined} onClick={() => void act(server.name, 'remove').then(() => setConfirming(false))}>
            {busy === 'remove' ? 'Removing…' : `Yes, remove ${server.name}`}
          </button>
          <button type="button" className="button small" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </>
      ) : (
        <button type="button" className="button small danger" disabled={busy !== undefined} onClick={() => setConfirming(true)} aria-label={`Remove ${server.name}…`}>
          Remove…
        </button>
      )}
      {error ? (
        <span className="inline-error" role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function ToolList({ server }: { server: McpServerView }) {
  const tools = server.tools ?? [];
  if (tools.length === 0) return <p className="muted">It offers no tools.</p>;
  return (
    <ul className="plain-list" aria-label={`Tools of ${server.name}`}>
      {tools.map((tool) => (
        <li key={tool.name}>
          <code>{tool.name}</code>
          {tool.title && tool.title !== tool.name ? <strong> {tool.title}</strong> : null}
          {tool.description ? <span className="muted"> — {tool.description}</span> : null}
          <details>
            <summary>Input schema of {tool.name}</summary>
            <JsonBlock value={tool.inputSchema} label={`Input schema of ${tool.name}`} />
          </details>
        </li>
      ))}
    </ul>
  );
}

function Capabilities({ server }: { server: McpServerView }) {
  const prompts = server.prompts ?? [];
  const resources = server.resources ?? [];
  return (
    <>
      <h4>Tools ({server.tools?.length ?? 0})</h4>
      <ToolList server={server} />
      <h4>Prompts ({prompts.length})</h4>
      {prompts.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul className="plain-list" aria-label={`Prompts of ${server.name}`}>
          {prompts.map((p) => (
            <li key={p.name}>
              <code>{p.name}</code>
              {p.description ? <span className="muted"> — {p.description}</span> : null}
              {p.arguments.length > 0 ? <span className="sub">arguments: {p.arguments.map((a) => `${a.name}${a.required ? '' : '?'}`).join(', ')}</span> : null}
            </li>
          ))}
        </ul>
      )}
      <h4>Resources ({resources.length})</h4>
      {resources.length === 0 ? (
        <p className="muted">None listed.</p>
      ) : (
        <ul className="plain-list" aria-label={`Resources of ${server.name}`}>
          {resources.map((r) => (
            <li key={r.uri}>
              <code>{r.uri}</code> {r.title ?? r.name}
              {r.mimeType ? <span className="muted"> ({r.mimeType})</span> : null}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function ServerCard({ server }: { server: McpServerView }) {
  const id = useId();
  const [label, tone] = STATE_WORDS[server.state];
  const stderr = server.stderrTail ?? [];
  return (
    <article className="panel" aria-labelledby={id}>
      <div className="panel-head">
        <h3 id={id}>{server.name}</h3>
        <StatusPill tone={tone}>{label}</StatusPill>
      </div>
      <dl className="facts facts-inline">
        <Fact label="Transport">{server.transport === 'stdio' ? 'stdio' : 'Streamable HTTP'}</Fact>
        {server.transport === 'stdio' && server.command ? (
          <Fact label="Command">
            <code>{shellLine([server.command, ...(server.args ?? [])])}</code>
          </Fact>
        ) : null}
        {server.url ? (
          <Fact label="URL">
            <code>{server.url}</code>
          </Fact>
        ) : null}
        {server.envNames && server.envNames.length > 0 ? (
          <Fact label="Environment">
            <Names names={server.envNames} what="values" />
          </Fact>
        ) : null}
        {server.headerNames && server.headerNames.length > 0 ? (
          <Fact label="Headers">
            <Names names={server.headerNames} what="values" />
          </Fact>
        ) : null}
        {server.negotiatedVersion ? <RevisionFact version={server.negotiatedVersion} /> : null}
        {server.serverInfo ? (
          <Fact label="Server">
            {server.serverInfo.name}
            {server.serverInfo.version ? ` ${server.serverInfo.version}` : ''}
          </Fact>
        ) : null}
      </dl>
      {server.error ? (
        <p className="inline-error">
          {server.state === 'failed' ? 'It failed: ' : 'Last error: '}
          {server.error}
        </p>
      ) : null}
      {stderr.length > 0 ? (
        <details>
          <summary>
            What it wrote to stderr lately ({stderr.length} {stderr.length === 1 ? 'line' : 'lines'})
          </summary>
          <pre className="terminal terminal-body" tabIndex={0} role="region" aria-label={`stderr of ${server.name}`}>
            {stderr.join('\n')}
          </pre>
        </details>
      ) : null}
      {server.state === 'connected' ? <Capabilities server={server} /> : null}
      <ServerActions server={server} />
    </article>
  );
}

export function McpServersPanel({ empty }: { empty: string }) {
  const headingId = useId();
  const servers = useApp((s) => s.mcpServers);
  const loaded = useApp((s) => s.mcpLoaded);
  const error = useApp((s) => s.mcpError);
  const refreshMcp = useApp((s) => s.refreshMcp);
  const formRequest = useApp((s) => s.mcpFormRequest);
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    if (formRequest > 0) setAdding(true);
  }, [formRequest]);
  const connected = servers.filter((s) => s.state === 'connected').length;
  return (
    <section className="stack" aria-labelledby={headingId}>
      <div className="toolbar">
        <div>
          <h2 id={headingId}>MCP servers your agents can call</h2>
          <p className="toolbar-summary">
            {loaded ? `${servers.length} declared · ${connected} connected · refreshed every 5 s` : error ? '' : 'Reading the declared servers…'}
          </p>
        </div>
        <div className="row-actions">
          <button type="button" className="button small" onClick={() => void refreshMcp()}>
            Refresh now
          </button>
          {!adding ? (
            <button type="button" className="button small primary" onClick={() => setAdding(true)}>
              Add server…
            </button>
          ) : null}
        </div>
      </div>
      {error ? (
        <p className="inline-error" role="alert">
          Could not list the MCP servers: {error}
        </p>
      ) : null}
      {adding ? <McpServerForm onClose={() => setAdding(false)} /> : null}
      {loaded && servers.length === 0 && !adding ? <EmptyState text={empty} action={{ label: 'Add a server', onClick: () => setAdding(true) }} /> : null}
      {servers.map((server) => (
        <ServerCard key={server.name} server={server} />
      ))}
    </section>
  );
}
