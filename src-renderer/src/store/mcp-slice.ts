/**
 * MCP: the plane's own endpoint (`mcp.endpoint`: what a host's config needs) and the MCP
 * servers declared for its agents to call (`mcp.servers.*`), as the plane last told us.
 *
 * A server's connection is the plane's state, not the journal's (a stdio server can exit, an
 * HTTP one stop answering, with nothing journaled), and no event announces it: the section
 * polls while it is shown (MCP_POLL_MS, see mcp-section.tsx), one read in flight at a time, and
 * re-reads at once after each action. An action's answer is the server's new view, put in the
 * list straight away so the page does not wait for the next poll.
 *
 * The views carry the names of a server's environment variables and headers, never their
 * values (src-shared/protocol/mcp.ts): the values are the plane's to keep. The endpoint's
 * bearer token does reach the page, because a person pastes it into a host's config; the
 * section masks it until asked.
 */
import type { CommandRequest } from '../../../src-shared/ipc/contract';
import type { Result } from '../../../src-shared/ipc/result';
import type { McpEndpointView, McpServerView } from '../../../src-shared/protocol/mcp';
import type { SliceDeps } from './store-types';

export const MCP_POLL_MS = 5000;

export type McpServerAction = 'connect' | 'disconnect' | 'remove';

export interface McpSlice {
  mcpEndpoint: McpEndpointView | null;
  mcpEndpointError: string | null;
  mcpServers: McpServerView[];
  mcpLoaded: boolean;
  /** Why the last read of the list failed (the list shown is then the one before). */
  mcpError: string | null;
  /** name → the action being sent for that server. */
  mcpBusy: Record<string, McpServerAction | undefined>;
  /** name → the plane's refusal of the last action on that server, in its words. */
  mcpActionErrors: Record<string, string | undefined>;
  /** Bumped to open the Add-server form (the command palette asks for it). */
  mcpFormRequest: number;
  requestMcpForm(): void;
  /** Reads the endpoint and the servers (one read in flight; a call meanwhile costs one more). */
  refreshMcp(): Promise<void>;
  /** Declares a server; the plane's refusal comes back as it said it. */
  addMcpServer(request: CommandRequest<'mcp.servers.add'>): Promise<Result<McpServerView>>;
  mcpServerAction(name: string, action: McpServerAction): Promise<boolean>;
}

const ACTION_WORDS: Record<McpServerAction, [done: string, failed: string]> = {
  connect: ['Connected to', 'Could not connect to'],
  disconnect: ['Disconnected from', 'Could not disconnect from'],
  remove: ['Removed', 'Could not remove'],
};

/** The list with `view` in place of the server of its name (or added, in name order). */
function withServer(list: McpServerView[], view: McpServerView): McpServerView[] {
  const at = list.findIndex((s) => s.name === view.name);
  if (at >= 0) return list.map((s, i) => (i === at ? view : s));
  return [...list, view].sort((a, b) => a.name.localeCompare(b.name));
}

export function createMcpSlice({ set, get, client }: SliceDeps): McpSlice {
  let reading: Promise<void> | null = null;
  let again = false;

  return {
    mcpEndpoint: null,
    mcpEndpointError: null,
    mcpServers: [],
    mcpLoaded: false,
    mcpError: null,
    mcpBusy: {},
    mcpActionErrors: {},
    mcpFormRequest: 0,

    requestMcpForm() {
      set((s) => ({ mcpFormRequest: s.mcpFormRequest + 1 }));
    },

    refreshMcp() {
      if (reading) {
        again = true;
        return reading;
      }
      const read = async () => {
        do {
          again = false;
          const [endpoint, servers] = await Promise.all([client.tryCall('mcp.endpoint', {}), client.tryCall('mcp.servers.list', {})]);
          if (endpoint.ok) set({ mcpEndpoint: endpoint.value, mcpEndpointError: null });
          else set({ mcpEndpointError: endpoint.error.message });
          if (servers.ok) set({ mcpServers: servers.value.servers, mcpLoaded: true, mcpError: null });
          else set({ mcpError: servers.error.message });
        } while (again);
      };
      reading = read().finally(() => (reading = null));
      return reading;
    },

    async addMcpServer(request) {
      const result = await client.tryCall('mcp.servers.add', request);
      if (result.ok) {
        set((s) => ({ mcpServers: withServer(s.mcpServers, result.value), mcpLoaded: true }));
        get().announce(`Added the MCP server ${request.name}.`);
      }
      return result;
    },

    async mcpServerAction(name, action) {
      if (get().mcpBusy[name]) return false;
      set((s) => ({ mcpBusy: { ...s.mcpBusy, [name]: action }, mcpActionErrors: { ...s.mcpActionErrors, [name]: undefined } }));
      let ok: boolean;
      /** The plane refused the command (shown at the server's actions). */
      let error: string | undefined;
      /** The server could not be reached (shown in its view). */
      let reason: string | undefined;
      if (action === 'remove') {
        const result = await client.tryCall('mcp.servers.remove', { name });
        ok = result.ok;
        if (result.ok) set((s) => ({ mcpServers: s.mcpServers.filter((x) => x.name !== name) }));
        else error = result.error.message;
      } else {
        const result = await client.tryCall(action === 'connect' ? 'mcp.servers.connect' : 'mcp.servers.disconnect', { name });
        ok = result.ok && result.value.state !== 'failed';
        if (result.ok) set((s) => ({ mcpServers: withServer(s.mcpServers, result.value) }));
        else error = result.error.message;
        // A connection that failed is an answer, not a refusal: the view holds why, in the
        // server's words, and the server's card shows it there (not twice).
        if (result.ok && !ok) reason = result.value.error;
      }
      set((s) => ({ mcpBusy: { ...s.mcpBusy, [name]: undefined }, mcpActionErrors: { ...s.mcpActionErrors, [name]: error } }));
      const [done, failed] = ACTION_WORDS[action];
      const why = error ?? reason;
      get().announce(ok ? `${done} the MCP server ${name}.` : `${failed} the MCP server ${name}${why ? `: ${why}` : ''}.`);
      // Another client (the CLI, another window) may have changed the list meanwhile.
      void get().refreshMcp();
      return ok;
    },
  };
}
