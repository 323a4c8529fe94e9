/**
 * What the MCP surface needs of the plane, owned here because protocols/ may not import plane/
 * (the layer order): the plane's one door (`dispatch`, the same commands every transport runs),
 * the journal's commit notifications (to follow a run without polling), and where a person
 * approves a waiting run. plane/mcp-endpoint.ts implements it over a Plane.
 *
 * Every call goes through `dispatch` naming the MCP caller (`{principal}`): the run is admitted
 * for the MCP caller (chain `[principal]`, trigger via `mcp`), policy is asked about that
 * caller, and the journal says who it was. Nothing here reads the journal or the runtime
 * directly, so the surface can never act with more authority than the door gives it.
 */
import type { Sensitivity } from '../../../src-shared/vocabulary/sensitivity';
import type { Result } from '../../../src-shared/ipc/result';
import type { RunChange } from '../../../src-shared/ipc/contract';

/** Who the MCP transport authenticated: `mcp:local` (bearer token), `mcp:stdio`, `mcp:anonymous`. */
export interface McpCallContext {
  principal: string;
}

export interface McpPlaneDoor {
  /** Runs one plane command exactly as every other transport does. */
  dispatch(name: string, request: unknown, context: McpCallContext): Promise<Result<unknown>>;
  /** Calls `listener` with the runs each journal commit touched; answers the unsubscribe. */
  onJournal(listener: (runs: readonly RunChange[]) => void): () => void;
  /** Where a person approves (or answers) this waiting run: the UI's approvals page, or a command. */
  approveWith(runId: string): string;
  /**
   * The plane's labels and ceilings, for what the surface hands a caller (a run resource:
   * run-resource.ts); absent where the surface answers for no plane's configuration.
   */
  sensitivity?: Sensitivity;
}
