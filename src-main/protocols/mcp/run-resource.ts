/**
 * Each run's journal as a read-only MCP resource, `agentplane://runs/<runId>`: the run's view
 * and its records, as JSON. A caller reads only the runs it admitted (the root of the run's
 * delegation chain is its principal); any other run answers exactly as a missing one does, so
 * a run id tells nobody else whether the run exists.
 *
 * docs/GOVERNED-RUNTIME.md warns that a resource read is an egress into a model's context, not an
 * operator reading their own journal: what crosses here is only what this same caller put in (its
 * input) and what its own run produced, never another principal's run. And not even that when the
 * run holds a value above the caller's sensitivity ceiling (docs/GOVERNED-RUNTIME.md,
 * "Sensitivity"): the caller is a destination like any other, named as its runs' input
 * provenance is (`mcp:local`, `mcp:stdio`, a token's principal).
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type ReadResourceResult, type Resource, type ResourceTemplateType } from '@modelcontextprotocol/server';
import type { CommandResponse, RunView } from '../../../src-shared/ipc/contract';
import type { McpCallContext, McpPlaneDoor } from './plane-door';
import { labelsHeld, type Sensitivity } from '../../../src-shared/vocabulary/sensitivity';

export const RUN_URI_PREFIX = 'agentplane://runs/';
const RUN_URI = /^agentplane:\/\/runs\/(run-[0-9a-f]{20})$/;
/** How many of the caller's runs resources/list offers (newest first). */
export const LISTED_RUNS = 50;
/** Runs looked at to find the caller's own (runs.list's cap). */
const RUNS_SCANNED = 1000;
/** Records returned per read (journal.records' cap); a longer run says `truncated`. */
const RECORDS_PER_READ = 5000;

export const runTemplate: ResourceTemplateType = {
  uriTemplate: `${RUN_URI_PREFIX}{runId}`,
  name: 'run',
  title: 'A run admitted through MCP',
  description: "A run's status, result and journal records (read-only). Only the runs you admitted.",
  mimeType: 'application/json',
};

export const runUri = (runId: string) => `${RUN_URI_PREFIX}${runId}`;

async function call<T>(door: McpPlaneDoor, name: string, request: unknown, context: McpCallContext): Promise<T | null> {
  const answer = await door.dispatch(name, request, context);
  return answer.ok ? (answer.value as T) : null;
}

export async function listOwnRuns(door: McpPlaneDoor, context: McpCallContext): Promise<Resource[]> {
  const listed = await call<CommandResponse<'runs.list'>>(door, 'runs.list', { limit: RUNS_SCANNED }, context);
  return (listed?.runs ?? [])
    .filter((run) => run.chain[0] === context.principal)
    .slice(0, LISTED_RUNS)
    .map((run) => ({
      uri: runUri(run.runId),
      name: run.runId,
      title: `${run.agent} (${run.status}${run.outcome ? `, ${run.outcome}` : ''})`,
      mimeType: 'application/json',
    }));
}

export async function readOwnRun(door: McpPlaneDoor, uri: string, context: McpCallContext): Promise<ReadResourceResult> {
  const runId = RUN_URI.exec(uri)?.[1];
  const run = runId ? await call<RunView>(door, 'runs.get', { runId }, context) : null;
  // Someone else's run reads as no run at all (resource not found, the same answer).
  if (!runId || !run || run.chain[0] !== context.principal) throw new ResourceNotFoundError(uri, `no run at ${uri}`);
  const page = await call<CommandResponse<'journal.records'>>(door, 'journal.records', { runId, limit: RECORDS_PER_READ }, context);
  const records = page?.records ?? [];
  if (door.sensitivity) assertWithinCallerCeiling(door.sensitivity, uri, records, context.principal);
  return {
    contents: [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({ run, records, truncated: page?.nextSeq !== null && page?.nextSeq !== undefined }),
      },
    ],
  };
}

/**
 * A run resource is refused whole when any value in it is above the caller's ceiling: the
 * records hold the values themselves (inputs, answers, requests made from them), and what
 * crosses must be bounded without reading them.
 */
function assertWithinCallerCeiling(sensitivity: Sensitivity, uri: string, records: ReadonlyArray<{ kind: string; body: unknown }>, caller: string): void {
  const above = sensitivity.firstAbove(labelsHeld(records), caller);
  if (!above) return;
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${uri} holds a ${above.label} value (${above.at}), above ${caller}'s sensitivity ceiling ${above.ceiling}; it is not sent`, { uri });
}
