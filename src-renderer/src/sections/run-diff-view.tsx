/**
 * Two runs side by side, step by step (runs.diff, docs/GOVERNED-RUNTIME.md "Fork, replay,
 * diff"): each run's input, outcome and spend, the spend difference, where they part, and one
 * row per step with what each side did, with which arguments, how it ended and what it spent.
 * A fork's steps taken from its parent are badged so; the step where the two part is marked in
 * words and scrolled into view.
 *
 * A comparison may hold 10,000 steps or more, so the step rows are virtualized as the timeline's
 * records are (timeline-list.tsx): only the rows on screen exist in the DOM, and a row reads its
 * step from the diff only when it is drawn. A value too large to travel in the diff comes as a
 * digest and a size, and "Open" reads its record by seq (journal.records).
 *
 * This view is a chunk of its own, fetched when a comparison is first opened (section-chunks.ts).
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useRef, useState } from 'react';
import type { RecordView } from '../../../src-shared/ipc/contract';
import type { DiffStep, RunDiff, StepSide, ValueRef } from '../../../src-shared/protocol/time-travel';
import { EmptyState } from '../components/empty-state';
import { JsonBlock } from '../components/json-block';
import { StatusPill } from '../components/status-pill';
import { count, spendLine } from '../lib/display-format';
import { diffDivergenceWords, sideEffect, sideOutcome, spendDifferenceWords, valueWords, type ValueWords } from '../lib/run-diff';
import { useApp, useAppStore } from '../store/store-context';
import { RunStatus } from './run-status';

export const DIFF_ROW_HEIGHT = 96;
const DIFF_HEAD_HEIGHT = 30;

type DiffRun = RunDiff['a'];

/** A value opened from its record: which, and the value (or why it could not be read). */
interface Opened {
  label: string;
  value?: unknown;
  error?: string;
}

type OpenValue = (label: string, read: () => Promise<{ ok: true; value: unknown } | { ok: false; error: { message: string } }>) => void;

/** A value by its words, with Open when only its digest came. */
function Value({ words, label, onOpen }: { words: ValueWords; label: string; onOpen?: () => void }) {
  return (
    <>
      <span className={words.large ? 'mono muted' : 'mono'} title={words.text}>
        {words.text}
      </span>
      {words.large && onOpen ? (
        <button type="button" className="button small ghost" onClick={onOpen} aria-label={`Open ${label}`}>
          Open
        </button>
      ) : null}
    </>
  );
}

/** The record holding a step's request: the side's own record when it has one, else its EffectStarted (read just before it). */
function requestOf(record: RecordView, side: StepSide, nearby: RecordView[]): unknown {
  if (record.body.request !== undefined) return record.body.request;
  const started = nearby.filter((r) => r.kind === 'EffectStarted' && r.body.key === side.key && r.seq <= side.seq).at(-1);
  return started?.body.request;
}

/** How far before an answer's record its start is looked for: a step's records are written together. */
const START_WINDOW = 64;

function useOpenSide(runId: string, step: number, side: StepSide, open: OpenValue) {
  const readRecord = useApp((s) => s.readRecord);
  const readWindow = useApp((s) => s.readRecordsBefore);
  return {
    request: () =>
      open(`the arguments of step ${step} in ${runId}`, async () => {
        const found = await readRecord(runId, side.seq);
        if (!found.ok) return found;
        if (found.value.body.request !== undefined) return { ok: true, value: found.value.body.request };
        const nearby = await readWindow(runId, side.seq, START_WINDOW);
        if (!nearby.ok) return nearby;
        const request = requestOf(found.value, side, nearby.value);
        return request === undefined ? { ok: false, error: { message: `the start of this step is not among the ${START_WINDOW} records before seq ${side.seq}` } } : { ok: true, value: request };
      }),
    result: () =>
      open(`the result of step ${step} in ${runId}`, async () => {
        const found = await readRecord(runId, side.seq);
        return found.ok ? { ok: true, value: found.value.body.result } : found;
      }),
  };
}

function Side({ runId, step, side, open }: { runId: string; step: number; side: StepSide | null; open: OpenValue }) {
  const opener = useOpenSide(runId, step, side ?? PLACEHOLDER_SIDE, open);
  if (!side) return <p className="muted rundiff-none">No such step: this run ended before it.</p>;
  return (
    <div className="rundiff-side-lines">
      <span className="rundiff-effect">
        {sideEffect(side)}
        {side.fromParent ? (
          <span className="badge" title="Taken from the parent's record: nothing performed">
            from parent
          </span>
        ) : null}
      </span>
      <span className="rundiff-line">
        <span className="rundiff-key">Arguments</span> <Value words={valueWords(side.request)} label={`arguments of step ${step} in ${runId}`} onOpen={opener.request} />
      </span>
      <span className="rundiff-line">
        <span className="rundiff-key">Result</span> <Value words={sideOutcome(side)} label={`result of step ${step} in ${runId}`} onOpen={opener.result} />
      </span>
      <span className="rundiff-line">
        <span className="rundiff-key">Spend</span> {spendLine(side.spend)}
      </span>
    </div>
  );
}

const PLACEHOLDER_SIDE: StepSide = {
  effect: '',
  name: '',
  key: '',
  request: { digest: '', size: 0 },
  result: null,
  failed: null,
  spend: { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 },
  fromParent: false,
  seq: 0,
};

const DiffRow = memo(function DiffRow({ step, start, diverges, a, b, open }: { step: DiffStep; start: number; diverges: boolean; a: string; b: string; open: OpenValue }) {
  return (
    <div
      role="row"
      aria-rowindex={step.step + 2}
      className={`rundiff-row${diverges ? ' rundiff-row-diverges' : step.same ? '' : ' rundiff-row-differs'}${step.fromParent ? ' rundiff-row-reused' : ''}`}
      style={{ transform: `translateY(${start}px)` }}
    >
      <div role="rowheader" className="rundiff-step">
        <span className="rundiff-step-number">
          <span className="visually-hidden">Step </span>
          {step.step}
        </span>
        {diverges ? <StatusPill tone="warn">Diverges here</StatusPill> : step.same ? <span className="muted">same</span> : <StatusPill tone="info">differs</StatusPill>}
        {step.fromParent ? <span className="badge">from parent</span> : null}
      </div>
      <div role="cell" className="rundiff-side">
        <Side runId={a} step={step.step} side={step.a} open={open} />
      </div>
      <div role="cell" className="rundiff-side">
        <Side runId={b} step={step.step} side={step.b} open={open} />
      </div>
    </div>
  );
});

function StepsTable({ diff, open }: { diff: RunDiff; open: OpenValue }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const steps = diff.steps;
  // The column heads stick at the top of the scrolling table, above the first row: the rows start below them.
  const virtualizer = useVirtualizer({ count: steps.length, getScrollElement: () => scrollRef.current, estimateSize: () => DIFF_ROW_HEIGHT, overscan: 6, scrollMargin: DIFF_HEAD_HEIGHT });
  const diverging = diff.divergesAt?.step ?? null;
  // The step where the two part is what a person opened the comparison for: brought into view once.
  const shownFor = useRef<RunDiff | null>(null);
  useEffect(() => {
    if (diverging === null || (shownFor.current?.a.runId === diff.a.runId && shownFor.current.b.runId === diff.b.runId)) return;
    shownFor.current = diff;
    virtualizer.scrollToIndex(diverging, { align: 'center' });
  }, [diff, diverging, virtualizer]);
  return (
    <div ref={scrollRef} className="rundiff-scroll" role="table" tabIndex={0} aria-label={`Steps of ${diff.a.runId} and ${diff.b.runId}`} aria-rowcount={steps.length + 1}>
      <div role="rowgroup" className="rundiff-head">
        <div role="row" aria-rowindex={1} className="rundiff-row rundiff-row-head">
          <span role="columnheader">Step</span>
          <span role="columnheader" className="mono">
            {diff.a.runId}
          </span>
          <span role="columnheader" className="mono">
            {diff.b.runId}
          </span>
        </div>
      </div>
      <div role="rowgroup" className="rundiff-sizer" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((item) => (
          <DiffRow key={item.key} step={steps[item.index]!} start={item.start - DIFF_HEAD_HEIGHT} diverges={item.index === diverging} a={diff.a.runId} b={diff.b.runId} open={open} />
        ))}
      </div>
    </div>
  );
}

function RunFacts({ diff, open }: { diff: RunDiff; open: OpenValue }) {
  const openRun = useApp((s) => s.openRun);
  const readRunInput = useApp((s) => s.readRunInput);
  const store = useAppStore();
  const value = (run: DiffRun, what: 'input' | 'result', ref: ValueRef) => (
    <Value
      words={valueWords(ref)}
      label={`the ${what} of ${run.runId}`}
      onOpen={() =>
        open(`the ${what} of ${run.runId}`, async () => {
          if (what === 'input') return readRunInput(run.runId);
          // A run's result is in its view (runs.get), which the runs list keeps.
          const view = store.getState().runs[run.runId];
          return view && view.result !== undefined ? { ok: true, value: view.result } : { ok: false, error: { message: `${run.runId} is not among the runs read here` } };
        })
      }
    />
  );
  const cell = (run: DiffRun, render: (run: DiffRun) => React.ReactNode) => <td>{render(run)}</td>;
  const row = (label: string, render: (run: DiffRun) => React.ReactNode) => (
    <tr>
      <th scope="row">{label}</th>
      {cell(diff.a, render)}
      {cell(diff.b, render)}
    </tr>
  );
  return (
    <div className="table-wrap">
      <table className="table rundiff-runs">
        <caption className="visually-hidden">The two runs</caption>
        <thead>
          <tr>
            <td />
            <th scope="col">Run a</th>
            <th scope="col">Run b</th>
          </tr>
        </thead>
        <tbody>
          {row('Run', (run) => (
            <button type="button" className="link-button mono" onClick={() => openRun(run.runId)} aria-label={`Open run ${run.runId}`}>
              {run.runId}
            </button>
          ))}
          {row('Agent', (run) => run.agent)}
          {row('Fork of', (run) => (run.forkOf ? `${run.forkOf.runId} at step ${run.forkOf.step}` : '—'))}
          {row('Input', (run) => value(run, 'input', run.input))}
          {row('Outcome', (run) => (
            <>
              <RunStatus run={{ status: run.status, outcome: run.outcome, pending: null }} />
              {run.error ? (
                <span className="inline-error">
                  {' '}
                  {run.error.code}: {run.error.message}
                </span>
              ) : null}
            </>
          ))}
          {row('Result', (run) => (run.result ? value(run, 'result', run.result) : <span className="muted">none</span>))}
          {row('Steps', (run) => count(run.steps))}
          {row('Spend', (run) => spendLine(run.spend))}
        </tbody>
      </table>
    </div>
  );
}

function OpenedValue({ opened, onClose }: { opened: Opened; onClose(): void }) {
  return (
    <section className="panel opened-value" aria-label={`Opened: ${opened.label}`}>
      <div className="panel-head">
        <h3>Opened: {opened.label}</h3>
        <button type="button" className="button small" onClick={onClose}>
          Close
        </button>
      </div>
      {opened.error !== undefined ? (
        <p className="inline-error" role="alert">
          Could not open it: {opened.error}
        </p>
      ) : opened.value === undefined ? (
        <p className="muted" role="status">
          Reading…
        </p>
      ) : (
        <JsonBlock value={opened.value} label={`Value of ${opened.label}`} />
      )}
    </section>
  );
}

function DiffBody({ diff }: { diff: RunDiff }) {
  const [opened, setOpened] = useState<Opened | null>(null);
  const latest = useRef(0);
  const open: OpenValue = (label, read) => {
    const mine = ++latest.current;
    setOpened({ label });
    void read().then((result) => {
      if (latest.current !== mine) return;
      setOpened(result.ok ? { label, value: result.value } : { label, error: result.error.message });
    });
  };
  return (
    <>
      <section className="run-header" aria-label="Summary of the comparison">
        <h2>
          Comparing <span className="mono">{diff.a.runId}</span> with <span className="mono">{diff.b.runId}</span>
        </h2>
        <p role="status" aria-label="Where they part">
          <StatusPill tone={diff.divergesAt ? 'warn' : 'ok'}>{diffDivergenceWords(diff.divergesAt, diff.steps.length)}</StatusPill>
        </p>
        <dl className="facts facts-inline">
          <div className="fact">
            <dt>Inputs</dt>
            <dd>{diff.sameInput ? 'the same' : 'different'}</dd>
          </div>
          <div className="fact">
            <dt>Spend difference (b − a)</dt>
            <dd>{spendDifferenceWords(diff.spendDifference)}</dd>
          </div>
        </dl>
        <RunFacts diff={diff} open={open} />
      </section>
      {opened ? <OpenedValue opened={opened} onClose={() => setOpened(null)} /> : null}
      {diff.steps.length === 0 ? <EmptyState text="Neither run performed a step." /> : <StepsTable diff={diff} open={open} />}
    </>
  );
}

export function RunDiffView({ a, b }: { a: string; b: string }) {
  const state = useApp((s) => s.runDiff);
  const loadDiff = useApp((s) => s.loadDiff);
  const navigate = useApp((s) => s.navigate);
  const openRun = useApp((s) => s.openRun);
  // Either run growing (a fork still running) reads the comparison again.
  const key = useApp((s) => `${a} ${b} ${s.runs[a]?.lastSeq ?? ''} ${s.runs[b]?.lastSeq ?? ''}`);
  const store = useAppStore();
  const seen = useRef<string | null>(null);
  useEffect(() => {
    const previous = seen.current;
    seen.current = key;
    const current = store.getState().runDiff;
    if (previous === null ? !current || current.a !== a || current.b !== b : previous !== key) void loadDiff(a, b);
  }, [key, a, b, loadDiff, store]);
  const mine = state && state.a === a && state.b === b ? state : null;
  return (
    <div className="timeline-view diff-view">
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <button type="button" className="link-button" onClick={() => navigate({ section: 'runs' })}>
          ← All runs
        </button>
        <span aria-hidden="true"> / </span>
        <button type="button" className="link-button mono" onClick={() => openRun(a)}>
          {a}
        </button>
        <span aria-hidden="true"> / </span>
        <span aria-current="page">
          compared with <span className="mono">{b}</span>
        </span>
      </nav>
      {mine?.error ? (
        <p className="inline-error" role="alert">
          Could not compare the runs: {mine.error}
        </p>
      ) : null}
      {mine?.diff ? (
        <DiffBody diff={mine.diff} />
      ) : mine?.error ? null : (
        <p className="muted" role="status">
          <span className="spinner" aria-hidden="true" /> Comparing the runs step by step…
        </p>
      )}
    </div>
  );
}
