/**
 * ListTasks: the caller's tasks of one agent, filtered and paged. It bounds both of its expensive
 * answers and says when a bound bit, never a quietly truncated total (docs/GOVERNED-RUNTIME.md).
 * The candidates are read from the journal's index of the runs each caller admitted (runs.list
 * with `owner`), so another caller's runs and the embedder's cost a listing nothing; with no
 * status filter the exact totalSize is a COUNT from that index and only the page is folded. A
 * status filter needs every candidate folded, so it reads at most `filterScanBudget` (1024) of the
 * caller's tasks, and over that is a -32602 naming statusTimestampAfter, the filter that narrows
 * from the index. Artifacts (includeArtifacts, false by default as the spec says) are bounded by
 * their bytes: past `artifactBudgetBytes` a page returns the rest without them, each marked
 * `io.agentplane.a2a/artifactsOmitted`, and GetTask on it returns them.
 */
import { createHash, createHmac } from 'node:crypto';
import type { CommandResponse, RunView } from '../../../src-shared/ipc/contract';
import { secretsEqual } from '../../base/constant-time';
import { artifactOf, RUN_ID, TASK_STATES, taskOf, taskStateOf, type TaskState } from './a2a-task-view';
import { A2A_ERRORS, RpcError, type Json } from './a2a-wire';

/** ListTasks folds at most this many of the caller's tasks to answer a status filter (docs/GOVERNED-RUNTIME.md's filter_scan_budget). */
const DEFAULT_FILTER_SCAN_BUDGET = 1024;
/** The artifact bytes one ListTasks page carries before the rest are omitted (and marked). */
const DEFAULT_ARTIFACT_BUDGET_BYTES = 4 << 20;
/** runs.list's own cap on one read. */
const RUNS_PER_READ = 1000;
const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;

export interface ListTasksOptions {
  /** A command through the plane's door, as the caller; throws the plane's error when refused. */
  ask<T>(name: string, request: unknown): Promise<T>;
  /** The caller: only the runs it admitted are its tasks. */
  principal: string;
  /** The runtime host whose runs the endpoint answers for (A2aServerOptions.host). */
  host: string;
  approveWith(runId: string): string;
  /** The endpoint's secret: page tokens are MACed with a key derived from it. */
  token: string;
  /** The bounds (tests shrink them): tasks folded for a status filter, artifact bytes per page. */
  filterScanBudget?: number;
  artifactBudgetBytes?: number;
}

/** Where the next ListTasks page starts: before an admission seq (index order), or after a task among the folded candidates (a status filter). */
type ListPosition = { b: number; r?: undefined } | { r: string; b?: undefined };

const pageTokenRefused = () => new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: pageToken is not one this server gave', { field: 'pageToken' });

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.(\d+))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * statusTimestampAfter as the journal writes times (ISO, milliseconds, Z). The spec returns a task
 * whose status timestamp is at or after it; a finer fraction than a millisecond rounds up, so a
 * record of the same millisecond but before the given instant is not taken for after it.
 */
function timestampOf(value: unknown): string {
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  const at = match ? Date.parse(value as string) : Number.NaN;
  if (!match || Number.isNaN(at)) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: statusTimestampAfter must be an RFC 3339 timestamp such as 2026-01-01T00:00:00Z', { field: 'statusTimestampAfter' });
  const beyondMs = /[1-9]/.test((match[2] ?? '').slice(3));
  return new Date(at + (beyondMs ? 1 : 0)).toISOString();
}

interface ListQuery {
  pageSize: number;
  pageToken: string;
  contextId: string | null;
  status: TaskState | null;
  /** statusTimestampAfter, normalised (timestampOf). */
  after: string | null;
  includeArtifacts: boolean;
  /** What a page token is bound to: the filters, so a token is a position in this list only. */
  digest: string;
}

/** ListTasks' params, each checked, a bad one named. historyLength is accepted and has no effect: a task here keeps no message history to return. */
function listQueryOf(params: Json): ListQuery {
  const bad = (field: string, what: string) => new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${field} ${what}`, { field });
  const pageSize = params.pageSize === undefined || params.pageSize === null ? DEFAULT_PAGE : Number(params.pageSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) throw bad('pageSize', `must be 1..${MAX_PAGE}`);
  if (params.pageToken !== undefined && typeof params.pageToken !== 'string') throw bad('pageToken', 'must be a string');
  if (params.contextId !== undefined && typeof params.contextId !== 'string') throw bad('contextId', 'must be a string');
  let status: TaskState | null = null;
  if (params.status !== undefined && params.status !== 'TASK_STATE_UNSPECIFIED' && params.status !== 0) {
    // ProtoJSON sends an enum by name; its number is accepted too.
    const named = typeof params.status === 'number' ? TASK_STATES[params.status - 1] : TASK_STATES.find((s) => s === params.status);
    if (named === undefined) throw bad('status', `must be a TaskState (${TASK_STATES.join(', ')})`);
    status = named;
  }
  const after = params.statusTimestampAfter === undefined || params.statusTimestampAfter === '' ? null : timestampOf(params.statusTimestampAfter);
  if (params.includeArtifacts !== undefined && typeof params.includeArtifacts !== 'boolean') throw bad('includeArtifacts', 'must be true or false');
  if (params.historyLength !== undefined && (!Number.isInteger(params.historyLength) || (params.historyLength as number) < 0)) throw bad('historyLength', 'must be a non-negative integer');
  const contextId = typeof params.contextId === 'string' && params.contextId !== '' ? params.contextId : null;
  return {
    pageSize,
    pageToken: (params.pageToken as string | undefined) ?? '',
    contextId,
    status,
    after,
    includeArtifacts: params.includeArtifacts === true,
    digest: createHash('sha256').update(JSON.stringify([contextId, status, after])).digest('base64url').slice(0, 22),
  };
}

/** The ListTasks method of one endpoint: `listTasks(agentName, params)` answers it for the caller. */
export function createListTasks(options: ListTasksOptions): (agentName: string, params: Json) => Promise<Json> {
  const { ask, principal, host, approveWith } = options;
  const filterScanBudget = options.filterScanBudget ?? DEFAULT_FILTER_SCAN_BUDGET;
  const artifactBudgetBytes = options.artifactBudgetBytes ?? DEFAULT_ARTIFACT_BUDGET_BYTES;

  /**
   * ListTasks (docs/GOVERNED-RUNTIME.md, "ListTasks bounds both of its expensive answers"). Rows
   * come newest admission first, so a page never shifts under a caller while tasks progress; the
   * page token is the position after the page's last task, signed (pageTokenOf) so a token this
   * server never gave is refused rather than read as a position.
   */
  async function listTasks(agentName: string, params: Json): Promise<Json> {
    const query = listQueryOf(params);
    // A contextId that is no run id is no context of anybody's: nothing matches it.
    if (query.contextId !== null && !RUN_ID.test(query.contextId)) return { tasks: [], nextPageToken: '', pageSize: query.pageSize, totalSize: 0 };
    const position = query.pageToken === '' ? null : positionOf(query.pageToken, query.digest);
    const filter = {
      owner: principal,
      agent: agentName,
      host,
      ...(query.contextId !== null ? { context: query.contextId } : {}),
      ...(query.after !== null ? { activeSince: query.after } : {}),
    };
    let page: RunView[];
    let totalSize: number;
    let next: ListPosition | null;
    if (query.status === null) {
      // Answered from the index: totalSize is its COUNT, and only the page is folded.
      if (position !== null && position.b === undefined) throw pageTokenRefused();
      const listed = await ask<CommandResponse<'runs.list'>>('runs.list', { ...filter, limit: query.pageSize, ...(position?.b !== undefined ? { beforeSeq: position.b } : {}) });
      page = listed.runs;
      totalSize = listed.total ?? listed.runs.length;
      next = listed.nextBeforeSeq !== undefined ? { b: listed.nextBeforeSeq } : null;
    } else {
      // A state is known only by folding each run: every candidate the other filters leave is
      // folded, so their number is bounded, and over it the caller is told which filter narrows
      // from the index rather than handed a total that quietly counts only part.
      if (position !== null && position.r === undefined) throw pageTokenRefused();
      const scanRefused = () =>
        new RpcError(
          A2A_ERRORS.invalidParams,
          `Invalid params: a status filter reads each of the caller's matching tasks, and more than ${filterScanBudget} match the other filters; narrow with statusTimestampAfter (or contextId)`,
          { field: 'statusTimestampAfter', scanBudget: filterScanBudget },
        );
      // The count comes from the index (one run folded); nothing more is read when it is over.
      const probe = await ask<CommandResponse<'runs.list'>>('runs.list', { ...filter, limit: 1 });
      if ((probe.total ?? 0) > filterScanBudget) throw scanRefused();
      const candidates: RunView[] = [...probe.runs];
      let before = probe.nextBeforeSeq;
      while (before !== undefined) {
        const more = await ask<CommandResponse<'runs.list'>>('runs.list', { ...filter, limit: Math.min(RUNS_PER_READ, filterScanBudget), beforeSeq: before });
        candidates.push(...more.runs);
        before = more.nextBeforeSeq;
        // Tasks admitted meanwhile can push the count past the budget: refused as well, never a partial count.
        if (candidates.length > filterScanBudget) throw scanRefused();
      }
      // The position is the last listed task's place among the candidates, which keep their order
      // (admission) and stay candidates as they progress, whatever their state becomes.
      const from = position?.r === undefined ? 0 : candidates.findIndex((r) => r.runId === position.r) + 1;
      if (position?.r !== undefined && from === 0) throw pageTokenRefused();
      const rest = candidates.slice(from).filter((r) => taskStateOf(r) === query.status);
      totalSize = candidates.filter((r) => taskStateOf(r) === query.status).length;
      page = rest.slice(0, query.pageSize);
      next = rest.length > query.pageSize ? { r: page[page.length - 1]!.runId } : null;
    }
    return {
      tasks: tasksWithArtifactBudget(page, query.includeArtifacts),
      nextPageToken: next ? pageTokenOf(next, query.digest) : '',
      pageSize: query.pageSize,
      totalSize,
    };
  }

  /**
   * A page's tasks, their artifacts included only when asked, and then within the page's budget:
   * an artifact is the run's whole output, so a page of large outputs would otherwise be an
   * answer of any size. Past the budget each task with an artifact is returned without it and
   * marked, never silently short; GetTask on it returns the artifact.
   */
  function tasksWithArtifactBudget(runs: RunView[], include: boolean): Json[] {
    let spent = 0;
    let over = false;
    return runs.map((run) => {
      if (!include) return taskOf(run, approveWith, 'without');
      const artifact = artifactOf(run);
      if (artifact === null) return taskOf(run, approveWith, 'without');
      spent += Buffer.byteLength(JSON.stringify(artifact));
      over ||= spent > artifactBudgetBytes;
      return taskOf(run, approveWith, over ? 'omitted' : 'with');
    });
  }

  /** An opaque page token: the position and the query it belongs to, MACed with a key derived from the endpoint's secret. */
  function pageTokenOf(position: ListPosition, digest: string): string {
    const payload = Buffer.from(JSON.stringify({ ...position, q: digest })).toString('base64url');
    return `${payload}.${pageTokenMac(payload)}`;
  }

  function positionOf(token: string, digest: string): ListPosition {
    const [payload, mac, extra] = token.split('.');
    if (payload === undefined || mac === undefined || extra !== undefined || !secretsEqual(mac, pageTokenMac(payload))) throw pageTokenRefused();
    const read = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { b?: unknown; r?: unknown; q?: unknown };
    // A token given for other filters would be a position in another list.
    if (read.q !== digest) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: pageToken was given for a ListTasks with other filters; send the same filters with it', { field: 'pageToken' });
    if (typeof read.b === 'number' && Number.isInteger(read.b)) return { b: read.b };
    if (typeof read.r === 'string' && RUN_ID.test(read.r)) return { r: read.r };
    throw pageTokenRefused();
  }

  const pageTokenMac = (payload: string) => createHmac('sha256', options.token).update(`a2a ListTasks page token\n${payload}`).digest('base64url');

  return listTasks;
}
