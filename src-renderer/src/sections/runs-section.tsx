/**
 * Runs: every run the runtime knows (newest first), filterable by agent, peer, status and
 * time, with a form to start one; a run opens as its journal timeline (run-timeline.tsx). Two
 * runs of one agent, chosen by their checkboxes, open as a step-by-step comparison
 * (run-diff-view.tsx, its own chunk: most visits never compare anything).
 */
import { lazy, Suspense, useEffect, useId, useMemo, useState } from 'react';
import { EmptyState } from '../components/empty-state';
import { useNow } from '../components/use-now';
import { count, relative } from '../lib/display-format';
import { tokensOf } from '../../../src-shared/vocabulary/spend';
import { behalfOf } from '../lib/wait-description';
import { isObservedRun, matchesFilter, NO_FILTER, RUN_LIST_LIMIT, type RunFilter } from '../store/runs-slice';
import { useApp } from '../store/store-context';
import { RunStartForm } from './run-start-form';
import { RunStatus } from './run-status';
import { RunTimeline } from './run-timeline';

const RunDiffView = lazy(() => import('./run-diff-view').then((m) => ({ default: m.RunDiffView })));

/** Why the chosen runs cannot be compared yet, or null when they can (two runs of one agent). */
function compareProblem(chosen: Array<{ agent: string }>): string | null {
  if (chosen.length < 2) return `Choose two runs of one agent to compare (${chosen.length} chosen).`;
  if (chosen.length > 2) return `Choose only two runs to compare (${chosen.length} chosen).`;
  return chosen[0]!.agent === chosen[1]!.agent ? null : 'The two runs are of different agents: choose two runs of one agent.';
}

const SINCE_OPTIONS: Array<[number, string]> = [
  [0, 'Any time'],
  [15 * 60_000, 'Last 15 minutes'],
  [60 * 60_000, 'Last hour'],
  [24 * 60 * 60_000, 'Last 24 hours'],
  [7 * 24 * 60 * 60_000, 'Last 7 days'],
];

const STATUS_OPTIONS: Array<[RunFilter['status'], string]> = [
  ['', 'Any status'],
  ['running', 'Running'],
  ['suspended', 'Waiting for a person'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
  ['ended-other', 'Cancelled, denied or halted'],
];

function RunFilters() {
  const id = useId();
  const filter = useApp((s) => s.runFilter);
  const setRunFilter = useApp((s) => s.setRunFilter);
  const agents = useApp((s) => s.agents);
  const runs = useApp((s) => s.runs);
  const peers = useApp((s) => s.peers);
  const agentNames = useMemo(() => [...new Set([...agents.map((a) => a.name), ...Object.values(runs).map((r) => r.agent)])].sort(), [agents, runs]);
  const active = filter.agent !== '' || filter.peer !== '' || filter.status !== '' || filter.sinceMs !== 0;
  return (
    <div className="filters" role="group" aria-label="Filter runs">
      <div className="field">
        <label htmlFor={`${id}-agent`}>Agent</label>
        <select id={`${id}-agent`} value={filter.agent} onChange={(e) => setRunFilter({ agent: e.target.value })}>
          <option value="">Any agent</option>
          {agentNames.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-peer`}>Peer</label>
        <select id={`${id}-peer`} value={filter.peer} onChange={(e) => setRunFilter({ peer: e.target.value })}>
          <option value="">Any peer</option>
          {peers.map((p) => (
            <option key={p.id} value={p.id}>
              {p.id}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-status`}>Status</label>
        <select id={`${id}-status`} value={filter.status} onChange={(e) => setRunFilter({ status: e.target.value as RunFilter['status'] })}>
          {STATUS_OPTIONS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-since`}>Started</label>
        <select id={`${id}-since`} value={filter.sinceMs} onChange={(e) => setRunFilter({ sinceMs: Number(e.target.value) })}>
          {SINCE_OPTIONS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      {active ? (
        <button type="button" className="button small ghost" onClick={() => setRunFilter(NO_FILTER)}>
          Clear filters
        </button>
      ) : null}
    </div>
  );
}

function RunsList({ empty }: { empty: string }) {
  const runs = useApp((s) => s.runs);
  const runsLoaded = useApp((s) => s.runsLoaded);
  const runsError = useApp((s) => s.runsError);
  const hosts = useApp((s) => s.runHosts);
  const filter = useApp((s) => s.runFilter);
  const openRun = useApp((s) => s.openRun);
  const openDiff = useApp((s) => s.openDiff);
  const [chosenIds, setChosenIds] = useState<string[]>([]);
  const compareId = useId();
  const requestStartForm = useApp((s) => s.requestStartForm);
  const canWriteNote = useApp((s) => s.agents.some((a) => a.name === 'write-note'));
  const now = useNow();
  // Editor sessions read as runs (for the inbox) are listed in their own view, not here.
  const all = useMemo(() => Object.values(runs).filter((r) => !isObservedRun(r)).sort((a, b) => b.admittedAt.localeCompare(a.admittedAt) || b.lastSeq - a.lastSeq), [runs]);
  // `now` moves every second; filtering by time is cheap enough to redo with it.
  const shown = useMemo(() => all.filter((r) => matchesFilter(r, filter, hosts[r.runId], now)), [all, filter, hosts, now]);

  // The older run is a, the newer b: the difference reads as what changed since.
  const chosen = chosenIds.map((id) => runs[id]).filter((r): r is NonNullable<typeof r> => r !== undefined);
  const problem = compareProblem(chosen);
  const toggle = (runId: string, on: boolean) => setChosenIds((ids) => (on ? [...ids.filter((id) => id !== runId), runId] : ids.filter((id) => id !== runId)));
  const compare = () => {
    const [a, b] = [...chosen].sort((x, y) => x.admittedAt.localeCompare(y.admittedAt) || x.lastSeq - y.lastSeq);
    if (a && b) openDiff(a.runId, b.runId);
  };

  if (runsError) return <p className="inline-error" role="alert">Could not list runs: {runsError}</p>;
  if (!runsLoaded && all.length === 0) return <p className="muted">Loading runs…</p>;
  if (all.length === 0) return <EmptyState text={empty} action={canWriteNote ? { label: 'Run write-note', onClick: () => requestStartForm('write-note') } : undefined} />;
  return (
    <>
      <p className="toolbar-summary" aria-live="polite">
        Showing {count(shown.length)} of {count(all.length)} runs{all.length >= RUN_LIST_LIMIT ? ` (the latest ${RUN_LIST_LIMIT})` : ''}.
      </p>
      <div className="compare-bar">
        <button type="button" className="button small" disabled={problem !== null} aria-describedby={`${compareId}-hint`} onClick={compare}>
          Compare
        </button>
        <span id={`${compareId}-hint`} className="field-hint">
          {problem ?? `Compare ${chosen.map((r) => r.runId).join(' with ')} step by step.`}
        </span>
        {chosenIds.length > 0 ? (
          <button type="button" className="button small ghost" onClick={() => setChosenIds([])}>
            Clear choice
          </button>
        ) : null}
      </div>
      {shown.length === 0 ? (
        <EmptyState text="No run matches these filters. Clear them to see every run." />
      ) : (
        <div className="table-wrap">
          <table className="table runs-table">
            <caption className="visually-hidden">Runs</caption>
            <thead>
              <tr>
                <th scope="col">
                  <span className="visually-hidden">Compare</span>
                </th>
                <th scope="col">Run</th>
                <th scope="col">Agent</th>
                <th scope="col">On behalf of</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Records
                </th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Effects
                </th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((run) => (
                <tr key={run.runId}>
                  <td>
                    <input type="checkbox" checked={chosenIds.includes(run.runId)} onChange={(e) => toggle(run.runId, e.target.checked)} aria-label={`Choose ${run.runId} to compare`} />
                  </td>
                  <th scope="row">
                    <button type="button" className="link-button mono" onClick={() => openRun(run.runId)}>
                      {run.runId}
                    </button>
                  </th>
                  <td>
                    {run.agent}
                    {hosts[run.runId]?.startsWith('peer:') ? <span className="sub">on {hosts[run.runId]}</span> : null}
                  </td>
                  <td>{behalfOf(run)}</td>
                  <td>
                    <RunStatus run={run} />
                  </td>
                  <td className="num">{count(run.records)}</td>
                  <td className="num">{count(tokensOf(run.spend))}</td>
                  <td className="num">{count(run.spend.effects)}</td>
                  <td title={run.admittedAt}>{relative(run.admittedAt, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function RunsSection({ empty }: { empty: string }) {
  const openRunId = useApp((s) => s.route.runId);
  const compareWith = useApp((s) => s.route.compareWith);
  const startFormRequest = useApp((s) => s.startFormRequest);
  const brokenNames = useApp((s) => s.brokenAgents.map((b) => b.name).join(', '));
  const brokenCount = useApp((s) => s.brokenAgents.length);
  const [starting, setStarting] = useState(false);
  useEffect(() => {
    if (startFormRequest > 0) setStarting(true);
  }, [startFormRequest]);

  if (openRunId && compareWith) {
    return (
      <Suspense
        fallback={
          <p className="section-loading" role="status">
            <span className="spinner" aria-hidden="true" /> Loading the comparison…
          </p>
        }
      >
        <RunDiffView a={openRunId} b={compareWith} />
      </Suspense>
    );
  }
  if (openRunId) return <RunTimeline runId={openRunId} />;
  return (
    <div className="section-body">
      <div className="toolbar">
        <RunFilters />
        <button type="button" className="button primary" aria-expanded={starting} onClick={() => setStarting((s) => !s)}>
          Start a run
        </button>
      </div>
      {brokenCount > 0 && !starting ? (
        <p className="inline-error">
          {brokenCount === 1 ? `The agent file of ${brokenNames} does not load.` : `${brokenCount} agent files do not load: ${brokenNames}.`}{' '}
          <button type="button" className="button small ghost" onClick={() => setStarting(true)}>
            Show what to fix
          </button>
        </p>
      ) : null}
      {starting ? <RunStartForm onClose={() => setStarting(false)} /> : null}
      <RunsList empty={empty} />
    </div>
  );
}
