/**
 * MCP, both ways: the plane served to MCP hosts (its endpoint and each host's config snippet,
 * mcp-endpoint.tsx), the MCP servers declared for its agents to call (mcp-servers.tsx), and how
 * an agent's manifest calls one of their tools.
 *
 * A server's connection is the plane's live state, not the journal's, and no event announces
 * it: the section reads it when shown and every MCP_POLL_MS while it stays shown, as Sessions
 * does for peers' sessions.
 */
import { useEffect, useId } from 'react';
import { CopyButton } from '../components/copy-button';
import { mcpManifestSnippet } from '../lib/mcp-snippets';
import { MCP_POLL_MS } from '../store/mcp-slice';
import { useApp } from '../store/store-context';
import { McpEndpointPanel } from './mcp-endpoint';
import { McpServersPanel } from './mcp-servers';

function useMcpPolling() {
  const refreshMcp = useApp((s) => s.refreshMcp);
  useEffect(() => {
    void refreshMcp();
    const timer = window.setInterval(() => void refreshMcp(), MCP_POLL_MS);
    return () => window.clearInterval(timer);
  }, [refreshMcp]);
}

/** The step and grant for a tool, from the first connected server that has one (else placeholders). */
function McpUsageHint() {
  const headingId = useId();
  const example = useApp((s) => {
    const server = s.mcpServers.find((x) => x.state === 'connected' && (x.tools?.length ?? 0) > 0);
    return server ? `${server.name}/${server.tools![0]!.name}` : null;
  });
  const [server, tool] = example ? (example.split('/') as [string, string]) : ['<server>', '<tool>'];
  const snippet = mcpManifestSnippet(server, tool);
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>How an agent calls a tool</h2>
      <p className="muted">
        A declared server grants nothing by itself: an agent’s manifest names each tool it may call as a grant, and calls it from a step. Each call is an effect of the run: journaled with its
        arguments and result, counted against the budget, and held for approval first when the grant says <code>approve: true</code>.
      </p>
      <div className="json-block">
        <div className="json-block-bar">
          <span className="json-block-label">Agent manifest (YAML)</span>
          <CopyButton value={snippet} label="Copy the manifest snippet" />
        </div>
        <pre tabIndex={0} role="region" aria-label="Manifest snippet">
          {snippet}
        </pre>
      </div>
    </section>
  );
}

export function McpSection({ empty }: { empty: string }) {
  useMcpPolling();
  return (
    <div className="section-body">
      <McpEndpointPanel />
      <McpServersPanel empty={empty} />
      <McpUsageHint />
    </div>
  );
}
