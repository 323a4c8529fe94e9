/**
 * A run calling a tool of an MCP server the user declared: `callMcpTool`, a governed effect like
 * any other (journaled once, replayed from the record and never performed twice, granted,
 * budgeted, approved when the grant says so).
 *
 * The grant is exact: `mcp:<server>/<tool>`, from the operator's manifest. What a server lists
 * is only a diff against that: a server cannot grant itself a tool by advertising it, and a
 * tool it drops simply fails at the call. Everything about reaching the server (the declared
 * servers file, the process or URL, the handshake, the deadline and what a failure on the wire
 * means) is behind `McpToolCaller`, an interface this layer owns and the protocols layer
 * implements (protocols/mcp/client/mcp-client-pool.ts): the runtime never imports the SDK. The
 * effect's request holds the server, the tool and the arguments, never the server's env or
 * headers (credentials stay in the servers file). What comes back is labelled `mcp:<server>`:
 * untrusted. Halts are checked between steps and again at the hop, once the connection is open
 * and right before the tools/call leaves (run-context.ts `hop`, as for a peer call): a halt that
 * came while the server was being connected to stops the call there, journaled `HaltedAtHop`.
 *
 * Large values: arguments or a result larger than LARGE_VALUE_BYTES of JSON are journaled as
 * their digest and size (large-values.ts), because the journal keeps every byte for ever. The
 * server still receives the whole arguments. A large result reaches the run as the same digest
 * and size it is journaled as, on the first execution and on replay alike, so both see one value.
 */
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import type { Traced } from '../../src-shared/vocabulary/provenance';
import { journaledValue, LARGE_VALUE_BYTES, type LargeValue } from './large-values';
import type { EffectAt, OutsideHop, RunContext } from './run-context';

/** How runs reach declared MCP servers. Implemented in protocols/mcp/client, wired in plane/. */
export interface McpToolCaller {
  /** Where a call to this server goes, for the effect's key: its URL, or `stdio:<command>`. */
  destinationOf(server: string): string;
  /**
   * Performs one tools/call. A failure is an `EffectFailure` whose disposition says whether the
   * tool can have run (see protocols/mcp/client/mcp-client-pool.ts for the rules). `hop`'s
   * `beforeDispatch` is called once the connection is open (connect and handshake done),
   * immediately before the tools/call is sent: a halt that came meanwhile stops it there.
   */
  callTool(server: string, tool: string, args: Record<string, unknown>, at: EffectAt, hop: OutsideHop): Promise<{ result: unknown; provenance: string }>;
  /**
   * The tool as the server lists it (description and inputSchema), for offering it to a model;
   * null when the server does not list it. Optional: a caller without it offers a permissive
   * object schema. A read, not an effect: what it returns enters the model request, so a
   * server that changed its schema shows up on replay as divergence of the model effect.
   */
  describeTool?(server: string, tool: string): Promise<{ description?: string; inputSchema: Record<string, unknown> } | null>;
}

export async function callMcpTool(cx: RunContext, caller: McpToolCaller, server: string, tool: string, args: Record<string, unknown>, sinks?: Readonly<Record<string, Traced>>): Promise<unknown> {
  const journaledArgs = journaledValue(args);
  return cx.effect({
    // Where each argument came from, for the grant's `protect:` (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks").
    ...(sinks ? { sinks } : {}),
    effect: 'mcp',
    name: `${server}/${tool}`,
    request: { server, tool, arguments: journaledArgs.large ? { large: journaledArgs.large } : args },
    destination: caller.destinationOf(server),
    grant: `mcp:${server}/${tool}`,
    estimate: { ...NO_SPEND, effects: 1 },
    async perform(at) {
      const { result, provenance } = await caller.callTool(server, tool, args, at, cx.hop());
      const journaled = journaledValue(result);
      const value: unknown = journaled.large
        ? ({ large: journaled.large, note: `the result of ${server}/${tool} was larger than ${LARGE_VALUE_BYTES} bytes of JSON; the journal keeps its digest and size only` } satisfies LargeValue)
        : result;
      return { result: value, spend: { ...NO_SPEND, effects: 1 }, provenance };
    },
  });
}
