/**
 * A run's journal as a timeline: the run's header (who, for whom, state, spend against its
 * ceilings, what it waits for, its result), the journal's verification badge, export to a
 * verifiable bundle, search, the virtualized record list and the record inspector. Records
 * arrive live as the run writes them; a model answer still streaming shows under the list,
 * labelled as not yet journaled, until its sealed effect arrives.
 *
 * Time travel (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): each step head can be forked
 * from (the fork opens as its own run), a fork says whose and where, and links to the
 * comparison with its parent, and any run can be replayed dry against a changed manifest,
 * model or input.
 */
import { describeErasure } from '../../../src-shared/journal/erased-payload';
import { useId, useState } from 'react';
import type { RunView } from '../../../src-shared/ipc/contract';
import type { WitnessStatusView } from '../../../src-shared/protocol/witness';
import { recordKinds } from '../../../src-shared/journal/records';
import { CopyButton } from '../components/copy-button';
import { EmptyState } from '../components/empty-state';
import { Fact } from '../components/fact';
import { JsonBlock } from '../components/json-block';
import { MeterBar } from '../components/meter-bar';
import { StatusPill } from '../components/status-pill';
import { useNow } from '../components/use-now';
import { count, dateTime, money, oneLineJson, plural, relative, shortHash } from '../lib/display-format';
import { tokensOf } from '../../../src-shared/vocabulary/spend';
import { KIND_LABELS } from '../lib/record-summary';
import { behalfOf, REASON_LABELS } from '../lib/wait-description';
import { searchActive } from '../store/timeline-slice';
import { useApp } from '../store/store-context';
import { LiveAnswers } from './live-answer';
import { RecordInspector } from './record-inspector';
import { RunLinksFacts } from './run-links';
import { RunStatus } from './run-status';
import { MatchesList, TimelineList } from './timeline-list';
import { ForkForm } from './fork-form';
import { ReplayForm } from './replay-form';

export function VerifyBadge({ lastSeq }: { lastSeq: number | null }) {
  const verify = useApp((s) => s.verify);
  const runVerify = useApp((s) => s.runVerify);
  let body: React.ReactNode;
  if (verify.state === 'busy') body = <StatusPill tone="busy">Verifying the journal…</StatusPill>;
  else if (verify.state === 'error') body = <StatusPill tone="bad">Could not verify: {verify.error}</StatusPill>;
  else if (!verify.report) body = <StatusPill tone="plain">Not verified yet: the check reads the whole journal</StatusPill>;
  else if (verify.report.ok) {
    const covered = lastSeq === null || verify.report.count >= lastSeq;
    body = covered ? (
      <StatusPill tone="ok" title={`Merkle root ${verify.report.root}`}>
        Verified up to seq {count(verify.report.count)} · root {shortHash(verify.report.root)}
      </StatusPill>
    ) : (
      <StatusPill tone="warn">Verified up to seq {count(verify.report.count)}; this run has newer records</StatusPill>
    );
  } else {
    body = (
      <StatusPill tone="bad">
        Verification failed{verify.report.seq !== null ? ` at seq ${verify.report.seq}` : ''}: {verify.report.reason}
      </StatusPill>
    );
  }
  return (
    <div className="verify-badge">
      <span role="status" aria-label="Journal verification">
        {body}
      </span>
      {verify.witness?.configured ? <WitnessPill witness={verify.witness} /> : null}
      <button type="button" className="button small" onClick={() => void runVerify(true)} disabled={verify.state === 'busy'}>
        {verify.report ? 'Verify again' : 'Verify journal'}
      </button>
    </div>
  );
}

/** The outside witness (docs/WITNESS.md): the last size it cosigned, when, and where it is. */
function WitnessPill({ witness }: { witness: WitnessStatusView }) {
  const where = `Witness ${witness.url ?? ''}`;
  if (witness.lastError) return <StatusPill tone="warn" title={witness.lastError}>{where}: {witness.cosigned ? `cosigned up to seq ${count(witness.cosigned.size)}; ` : ''}not reachable now</StatusPill>;
  if (!witness.cosigned) return <StatusPill tone="plain">{where}: nothing cosigned yet</StatusPill>;
  return (
    <StatusPill tone="ok" title={`${witness.cosigned.witness}, ${witness.cosigned.time}`}>
      {where}: cosigned up to seq {count(witness.cosigned.size)} · {dateTime(witness.cosigned.time)}
    </StatusPill>
  );
}

export function ExportButton({ runId }: { runId: string }) {
  const state = useApp((s) => s.exports[runId]);
  const exportRun = useApp((s) => s.exportRun);
  return (
    <div className="export">
      <button type="button" className="button small" onClick={() => void exportRun(runId)} disabled={state?.busy} aria-describedby={`export-${runId}`}>
        {state?.busy ? (
          <>
            <span className="spinner" aria-hidden="true" /> Exporting…
          </>
        ) : (
          'Export bundle'
        )}
      </button>
      <span id={`export-${runId}`} className="export-state" role="status">
        {state?.error ? <span className="inline-error">Export failed: {state.error}</span> : null}
        {state?.done ? `Saved ${state.done.fileName}: ${count(state.done.records)} records, root ${shortHash(state.done.rootHash)}` : null}
      </span>
    </div>
  );
}

function CancelButton({ run }: { run: RunView }) {
  const cancelRun = useApp((s) => s.cancelRun);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (run.status === 'sealed') return null;
  if (!confirming) {
    return (
      <button type="button" className="button small danger" onClick={() => setConfirming(true)}>
        Cancel run…
      </button>
    );
  }
  return (
    <span className="confirm">
      <button
        type="button"
        className="button small danger"
        onClick={() =>
          void cancelRun(run.runId, 'cancelled from the timeline').then((r) => {
            setConfirming(false);
            setError(r.ok ? null : r.error.message);
          })
        }
      >
        Yes, cancel it
      </button>
      <button type="button" className="button small" onClick={() => setConfirming(false)}>
        Keep running
      </button>
      {error ? (
        <span className="inline-error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}

/** A fork's parent and fork point, with the way to its parent and to the comparison of the two. */
function ForkOf({ run }: { run: RunView }) {
  const openRun = useApp((s) => s.openRun);
  const openDiff = useApp((s) => s.openDiff);
  if (!run.forkOf) return null;
  const parent = run.forkOf.runId;
  return (
    <p className="fork-of">
      Fork of{' '}
      <button type="button" className="link-button mono" onClick={() => openRun(parent)} aria-label={`Open the parent run ${parent}`}>
        {parent}
      </button>{' '}
      at step {run.forkOf.step}; its steps marked &ldquo;Taken from parent&rdquo; were answered from the parent&apos;s record.{' '}
      <button type="button" className="button small" onClick={() => openDiff(parent, run.runId)}>
        Compare with parent
      </button>
    </p>
  );
}

/** A run whose owner was erased (docs/ERASURE.md): when, by whom and why its payloads went; its records still verify. */
function ErasedNote({ run }: { run: RunView }) {
  if (!run.erased) return null;
  return (
    <p className="fork-of" role="note">
      Payloads {describeErasure(run.erased)}. Its records, hashes and checkpoints still verify; what it was asked and answered cannot be read.
    </p>
  );
}

function RunHeader({ run, runId, replaying, onReplay }: { run: RunView | undefined; runId: string; replaying: boolean; onReplay(): void }) {
  const host = useApp((s) => s.runHosts[runId]);
  const navigate = useApp((s) => s.navigate);
  const setFocusWait = useApp((s) => s.setFocusWait);
  const now = useNow();
  if (!run) {
    return (
      <header className="run-header">
        <h2>
          Run <code>{runId}</code>
        </h2>
        <p className="muted">Reading the run…</p>
      </header>
    );
  }
  return (
    <header className="run-header">
      <div className="run-title">
        <h2>
          {run.agent} <span className="sub mono">{run.runId}</span>
        </h2>
        <CopyButton value={run.runId} label="Copy run id" />
        <RunStatus run={run} />
      </div>
      <dl className="facts facts-inline">
        <Fact label="On behalf of">{behalfOf(run)}</Fact>
        {host ? <Fact label="Hosted by">{host === 'plane' ? 'the plane' : host}</Fact> : null}
        <Fact label="Admitted" title={dateTime(run.admittedAt)}>
          {relative(run.admittedAt, now)}
        </Fact>
        <Fact label="Records">{count(run.records)}</Fact>
        <Fact label="Tokens">
          <MeterBar used={tokensOf(run.spend)} limit={run.budget.maxTokens} unit="" />
        </Fact>
        <Fact label="Effects">
          <MeterBar used={run.spend.effects} limit={run.budget.maxEffects} unit="" />
        </Fact>
        {run.budget.maxCostMicros !== undefined || run.spend.costMicros > 0 ? (
          <Fact label="Cost">
            <MeterBar used={run.spend.costMicros} limit={run.budget.maxCostMicros} unit="" format={money} />
          </Fact>
        ) : null}
      </dl>
      <ForkOf run={run} />
      <ErasedNote run={run} />
      <RunLinksFacts run={run} />
      {run.pending ? (
        <p className="pending-note">
          <StatusPill tone="warn">{REASON_LABELS[run.pending.reason]}</StatusPill> since {relative(run.pending.since, now)}.{' '}
          <button
            type="button"
            className="link-button"
            onClick={() => {
              setFocusWait(run.runId);
              navigate({ section: 'approvals' });
            }}
          >
            Decide in Approvals
          </button>
        </p>
      ) : null}
      {run.error ? (
        <p className="inline-error">
          {run.error.code}: {run.error.message}
        </p>
      ) : null}
      {run.result !== undefined ? (
        <details className="result">
          <summary>
            Result: <code>{oneLineJson(run.result, 140)}</code>
          </summary>
          <JsonBlock value={run.result} label="Result" />
        </details>
      ) : null}
      <div className="run-actions">
        <VerifyBadge lastSeq={run.lastSeq} />
        <ExportButton runId={run.runId} />
        <button type="button" className="button small" aria-expanded={replaying} onClick={onReplay}>
          Dry replay
        </button>
        <CancelButton run={run} />
      </div>
    </header>
  );
}

function TimelineSearch() {
  const id = useId();
  const search = useApp((s) => s.search);
  const total = useApp((s) => s.timeline.count);
  const setSearch = useApp((s) => s.setSearch);
  const scanRun = useApp((s) => s.scanRun);
  const cancelScan = useApp((s) => s.cancelScan);
  const active = searchActive(search);
  let status = '';
  if (active) {
    if (search.scanning) status = `Searching… ${count(search.scanned)} of ${count(total)} records read, ${plural(search.matches.length, "match", "matches")} so far.`;
    else if (search.scope === 'run') status = `${plural(search.matches.length, 'match', 'matches')}${search.truncated ? ' (the first ones)' : ''} in all ${count(search.scanned)} records.`;
    else status = `${plural(search.matches.length, 'match', 'matches')} among the ${count(search.scanned)} records loaded so far.`;
  }
  return (
    <div className="timeline-search" role="search" aria-label="Search this run">
      <div className="field">
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={search.kind} onChange={(e) => setSearch({ kind: e.target.value })}>
          <option value="">Any kind</option>
          {recordKinds.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind] ?? kind}
            </option>
          ))}
        </select>
      </div>
      <div className="field field-grow">
        <label htmlFor={`${id}-text`}>Search records</label>
        <input id={`${id}-text`} type="search" value={search.text} placeholder="words in the kind, summary or body" onChange={(e) => setSearch({ text: e.target.value })} />
      </div>
      <p className="search-status" role="status">
        {status}
      </p>
      {active && search.scope === 'loaded' && !search.scanning && search.scanned < total ? (
        <button type="button" className="button small" onClick={() => void scanRun()}>
          Search all {count(total)} records
        </button>
      ) : null}
      {search.scanning ? (
        <button type="button" className="button small" onClick={cancelScan}>
          Stop searching
        </button>
      ) : null}
      {active ? (
        <button type="button" className="button small ghost" onClick={() => setSearch({ kind: '', text: '' })}>
          Clear search
        </button>
      ) : null}
      {search.error ? (
        <p className="inline-error" role="alert">
          {search.error}
        </p>
      ) : null}
    </div>
  );
}

export function RunTimeline({ runId }: { runId: string }) {
  const run = useApp((s) => s.runs[runId]);
  const navigate = useApp((s) => s.navigate);
  // The plane has no such run (or the address names no run id): say so, rather than wait for ever.
  const missing = useApp((s) => !run && s.missingRuns[runId] === true);
  const back = () => navigate({ section: 'runs' });
  return (
    <div className="timeline-view">
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <button type="button" className="link-button" onClick={back}>
          ← All runs
        </button>
        <span aria-hidden="true"> / </span>
        <span aria-current="page" className="mono">
          {runId}
        </span>
      </nav>
      {/* Keyed by run: a fork opened from here starts with its own forms closed. */}
      {missing ? <EmptyState text={`No run ${runId} in this plane's journal.`} action={{ label: 'Show all runs', onClick: back }} /> : <RunTimelineBody key={runId} run={run} runId={runId} />}
    </div>
  );
}

function RunTimelineBody({ run, runId }: { run: RunView | undefined; runId: string }) {
  const search = useApp((s) => s.search);
  const total = useApp((s) => s.timeline.count);
  const active = searchActive(search);
  const [forkAt, setForkAt] = useState<number | null>(null);
  const [replaying, setReplaying] = useState(false);
  return (
    <>
      <RunHeader run={run} runId={runId} replaying={replaying} onReplay={() => setReplaying((r) => !r)} />
      {replaying ? <ReplayForm runId={runId} onClose={() => setReplaying(false)} /> : null}
      {forkAt !== null ? <ForkForm key={forkAt} runId={runId} at={forkAt} onClose={() => setForkAt(null)} /> : null}
      <TimelineSearch />
      <div className="timeline-split">
        {active ? (
          <MatchesList matches={search.matches} label={`Records of ${runId} matching the search`} />
        ) : (
          <TimelineList label={`Timeline of ${runId}: ${count(total)} records`} onFork={setForkAt} />
        )}
        <RecordInspector />
      </div>
      <LiveAnswers />
    </>
  );
}
