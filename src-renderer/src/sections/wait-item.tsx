/**
 * One waiting run in the inbox: what is asked, by which agent, for whom, the exact effect and
 * its arguments, what it may cost, and the decisions that fit what suspended it. A decision
 * is sent with the wait's id and the hash of the subject shown here.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { RunView } from '../../../src-shared/ipc/contract';
import { Fact } from '../components/fact';
import { JsonBlock } from '../components/json-block';
import { MeterBar } from '../components/meter-bar';
import { StatusPill } from '../components/status-pill';
import { useNow } from '../components/use-now';
import { budgetLine, dateTime, money, relative, shortHash, spendLine } from '../lib/display-format';
import { BUDGET_FIELD, tokensOf, type Budget, type Ceiling } from '../../../src-shared/vocabulary/spend';
import { behalfOf, describeWait, suggestedCeiling, type WaitDescription } from '../lib/wait-description';
import { useApp } from '../store/store-context';
import type { WaitSubjectOf } from '../../../src-shared/vocabulary/waits';
import { DiffView } from './acp-tool-call';

const SNOOZES: Array<[number, string]> = [
  [15 * 60_000, '15 minutes'],
  [60 * 60_000, '1 hour'],
  [4 * 60 * 60_000, '4 hours'],
  [24 * 60 * 60_000, '1 day'],
];

function Snooze({ runId, busy }: { runId: string; busy: boolean }) {
  const id = useId();
  const decide = useApp((s) => s.decide);
  const [ms, setMs] = useState(SNOOZES[1]![0]);
  return (
    <span className="snooze">
      <label htmlFor={`${id}-for`}>Snooze for</label>
      <select id={`${id}-for`} value={ms} onChange={(e) => setMs(Number(e.target.value))}>
        {SNOOZES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <button type="button" className="button small" disabled={busy} onClick={() => void decide(runId, 'snooze', { until: new Date(Date.now() + ms).toISOString() })}>
        Snooze
      </button>
    </span>
  );
}

function DenyWithReason({ runId, busy, label = 'Deny', confirmLabel = 'Deny' }: { runId: string; busy: boolean; label?: string; confirmLabel?: string }) {
  const id = useId();
  const decide = useApp((s) => s.decide);
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (open) input.current?.focus();
  }, [open]);
  if (!open) {
    return (
      <button type="button" className="button small danger" disabled={busy} onClick={() => setOpen(true)}>
        {label}…
      </button>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!reason.trim()) {
      setProblem(true);
      input.current?.focus();
      return;
    }
    void decide(runId, 'deny', { reason: reason.trim() });
  };
  return (
    <form className="deny-form" onSubmit={submit} aria-label={`${label} with a reason`}>
      <label htmlFor={`${id}-reason`}>Reason</label>
      <input
        id={`${id}-reason`}
        ref={input}
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? `${id}-problem` : undefined}
        placeholder="kept in the run's journal"
      />
      <button type="submit" className="button small danger" disabled={busy}>
        {confirmLabel}
      </button>
      <button type="button" className="button small" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {problem ? (
        <span className="field-error" id={`${id}-problem`}>
          Say why: the reason is journaled with the decision.
        </span>
      ) : null}
    </form>
  );
}

const CEILING_LABELS: Record<Ceiling, string> = {
  tokens: 'New token ceiling',
  effects: 'New effect ceiling',
  cost: 'New cost ceiling (micro-units)',
};

function RaiseCeiling({ run, info, description, busy }: { run: RunView; info: NonNullable<WaitDescription['budget']>; description: WaitDescription; busy: boolean }) {
  const id = useId();
  const decide = useApp((s) => s.decide);
  const key = BUDGET_FIELD[info.ceiling];
  const suggested = suggestedCeiling(description)[key];
  const [value, setValue] = useState(String(suggested ?? ''));
  const [problem, setProblem] = useState<string | null>(null);
  const current = info.budget[key];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const n = Number(value);
    if (!/^\d+$/.test(value) || (current !== undefined && n <= current)) {
      setProblem(`A whole number above the current ceiling${current !== undefined ? ` (${current})` : ''}.`);
      return;
    }
    setProblem(null);
    const budget: Budget = { ...info.budget, [key]: n };
    void decide(run.runId, 'approve', { value: { kind: 'budget', budget } });
  };
  return (
    <form className="raise-form" onSubmit={submit} aria-label="Raise the ceiling">
      <label htmlFor={`${id}-ceiling`}>{CEILING_LABELS[info.ceiling]}</label>
      <input
        id={`${id}-ceiling`}
        inputMode="numeric"
        value={value}
        onChange={(e) => setValue(e.target.value.trim())}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? `${id}-problem` : undefined}
      />
      <button type="submit" className="button small primary" disabled={busy}>
        Raise ceiling
      </button>
      {problem ? (
        <span className="field-error" id={`${id}-problem`}>
          {problem}
        </span>
      ) : null}
    </form>
  );
}

function AnswerInput({ runId, busy }: { runId: string; busy: boolean }) {
  const id = useId();
  const decide = useApp((s) => s.decide);
  const [answer, setAnswer] = useState('');
  const [problem, setProblem] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!answer.trim()) return setProblem(true);
    setProblem(false);
    void decide(runId, 'approve', { value: { kind: 'input', input: answer } });
  };
  return (
    <form className="answer-form" onSubmit={submit} aria-label="Answer the question">
      <label htmlFor={`${id}-answer`}>Your answer</label>
      <textarea id={`${id}-answer`} rows={2} value={answer} onChange={(e) => setAnswer(e.target.value)} aria-invalid={problem ? true : undefined} aria-describedby={problem ? `${id}-problem` : undefined} />
      <button type="submit" className="button small primary" disabled={busy}>
        Send answer
      </button>
      {problem ? (
        <span className="field-error" id={`${id}-problem`}>
          Write the answer the run asked for.
        </span>
      ) : null}
    </form>
  );
}

function Actions({ run, description }: { run: RunView; description: WaitDescription }) {
  const busyAction = useApp((s) => s.decisionBusy[run.runId]);
  const decide = useApp((s) => s.decide);
  const resolveRecovery = useApp((s) => s.resolveRecovery);
  const liftHalt = useApp((s) => s.liftHalt);
  const busy = busyAction !== undefined;
  const wait = run.pending!;
  switch (wait.reason) {
    case 'approval':
    case 'payment':
    case 'oversight':
    case 'provenance':
      // Approving a provenance wait lets the value through from that origin, for this effect only.
      return (
        <div className="wait-actions">
          <button type="button" className="button small primary" disabled={busy} onClick={() => void decide(run.runId, 'approve')}>
            {busyAction === 'approve' ? 'Approving…' : 'Approve'}
          </button>
          <DenyWithReason runId={run.runId} busy={busy} />
          <Snooze runId={run.runId} busy={busy} />
        </div>
      );
    case 'budget':
      return (
        <div className="wait-actions">
          {description.budget ? <RaiseCeiling run={run} info={description.budget} description={description} busy={busy} /> : null}
          <DenyWithReason runId={run.runId} busy={busy} label="Stop run" confirmLabel="Stop run" />
          <Snooze runId={run.runId} busy={busy} />
        </div>
      );
    case 'input':
      return (
        <div className="wait-actions">
          <AnswerInput runId={run.runId} busy={busy} />
          <DenyWithReason runId={run.runId} busy={busy} label="Decline" confirmLabel="Decline" />
          <Snooze runId={run.runId} busy={busy} />
        </div>
      );
    case 'recovery':
      return (
        <div className="wait-actions">
          <button type="button" className="button small primary" disabled={busy} onClick={() => void resolveRecovery(run.runId, 'retry')}>
            Retry
          </button>
          <button type="button" className="button small" disabled={busy} onClick={() => void resolveRecovery(run.runId, 'landed')}>
            Mark as landed
          </button>
          <button type="button" className="button small danger" disabled={busy} onClick={() => void resolveRecovery(run.runId, 'fail', 'resolved as failed from the inbox')}>
            Fail
          </button>
        </div>
      );
    case 'permission': {
      // The agent's own options, as it named them; choosing one answers the editor's request
      // (the first answer wins: the editor may have answered already, and then the plane says so).
      const subject = description.permission;
      return (
        <div className="wait-actions" role="group" aria-label={`Options for ${subject?.toolCall.title ?? 'the tool call'}`}>
          {subject?.options.map((option) => (
            <button
              key={option.optionId}
              type="button"
              className={`button small${option.kind.startsWith('allow') ? ' primary' : option.kind.startsWith('reject') ? ' danger' : ''}`}
              disabled={busy}
              onClick={() => void decide(run.runId, 'approve', { value: { kind: 'permission', optionId: option.optionId } })}
            >
              {busyAction === 'approve' ? '…' : `${option.name} (${option.kind.replace(/_/g, ' ')})`}
            </button>
          ))}
          <button type="button" className="button small" disabled={busy} onClick={() => void decide(run.runId, 'deny', { reason: 'cancelled from the inbox' })}>
            Cancel the request
          </button>
        </div>
      );
    }
    case 'halt':
      return (
        <div className="wait-actions">
          <span className="muted">Withheld until the halt{description.scope ? ` on ${description.scope}` : ''} is lifted.</span>
          {description.scope ? (
            <button type="button" className="button small" disabled={busy} onClick={() => void liftHalt(run.runId, description.scope!)}>
              Lift halt
            </button>
          ) : null}
        </div>
      );
  }
}

/** What the agent asks to do: the tool call's kind and locations, and the edit when it proposes one. */
function PermissionDetails({ subject }: { subject: WaitSubjectOf<'permission'> }) {
  return (
    <div className="permission-details">
      {subject.toolCall.locations.length > 0 ? (
        <ul className="permission-locations" aria-label="Files">
          {subject.toolCall.locations.map((l) => (
            <li key={`${l.path}:${l.line ?? ''}`}>
              <code>{l.line === undefined ? l.path : `${l.path}:${l.line}`}</code>
            </li>
          ))}
        </ul>
      ) : null}
      {subject.diff ? <DiffView path={subject.diff.path} oldText={subject.diff.oldText} newText={subject.diff.newText} truncated={subject.diff.truncated} /> : null}
    </div>
  );
}

/**
 * Where each protected field's value came from (a provenance wait; docs/GOVERNED-RUNTIME.md,
 * "Provenance at protected sinks"): the person accepts an origin, so the origin is what is shown.
 */
function Origins({ origins }: { origins: NonNullable<WaitDescription['origins']> }) {
  return (
    <ul className="wait-origins" aria-label="Where the values came from">
      {origins.map((o) => (
        <li key={o.field}>
          <strong>{o.field}</strong> <code>{JSON.stringify(o.value) ?? 'null'}</code> came from <strong>{o.from.join(', ')}</strong>
          {o.via.length > 0 ? (
            <>
              {' '}
              via <code>{o.via.join(', ')}</code>
            </>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

export function WaitItem({ run, focused }: { run: RunView; focused: boolean }) {
  const titleId = useId();
  const selected = useApp((s) => s.selectedWaits[run.runId] === true);
  const toggle = useApp((s) => s.toggleWaitSelected);
  const error = useApp((s) => s.decisionErrors[run.runId]);
  const openRun = useApp((s) => s.openRun);
  const navigate = useApp((s) => s.navigate);
  const setFocusWait = useApp((s) => s.setFocusWait);
  const heading = useRef<HTMLHeadingElement>(null);
  const now = useNow();
  const wait = run.pending!;
  const description = describeWait(wait);

  useEffect(() => {
    if (!focused) return;
    heading.current?.scrollIntoView({ block: 'center' });
    heading.current?.focus();
    setFocusWait(null);
  }, [focused, setFocusWait]);

  const snoozed = wait.snoozedUntil && Date.parse(wait.snoozedUntil) > now;
  return (
    <article className={`wait-card wait-${wait.reason}${focused ? ' wait-focused' : ''}`} aria-labelledby={titleId}>
      <div className="wait-head">
        <input type="checkbox" checked={selected} onChange={(e) => toggle(run.runId, e.target.checked)} aria-label={`Select: ${description.title}, ${run.agent}, ${run.runId}`} />
        <h2 id={titleId} ref={heading} tabIndex={-1}>
          {description.title}: {run.agent}
        </h2>
        <span className="muted" title={dateTime(wait.since)}>
          waiting {relative(wait.since, now).replace(' ago', '')}
        </span>
        {snoozed ? <StatusPill tone="plain">Snoozed until {dateTime(wait.snoozedUntil!)}</StatusPill> : null}
      </div>
      <p className="wait-summary">
        <strong>{description.summary}</strong>
      </p>
      <dl className="facts facts-inline">
        {wait.reason === 'permission' ? (
          <Fact label="Editor session">
            <button type="button" className="link-button mono" onClick={() => navigate({ section: 'acp', runId: run.runId })} aria-label={`Open the editor session ${run.runId}`}>
              {run.runId}
            </button>
          </Fact>
        ) : (
          <Fact label="Run">
            <button type="button" className="link-button mono" onClick={() => openRun(run.runId, wait.seq)}>
              {run.runId}
            </button>
          </Fact>
        )}
        <Fact label="On behalf of">{behalfOf(run)}</Fact>
        {description.effect ? (
          <Fact label="Effect">
            <code>{description.effect}</code>
          </Fact>
        ) : null}
        {description.amount ? <Fact label="Would cost">{description.amount}</Fact> : description.estimate ? <Fact label="Would cost">{spendLine(description.estimate)} (estimate)</Fact> : null}
        {/* An observed editor session spends nothing through the plane: no meter to show. */}
        {wait.reason === 'permission' ? null : <Fact label="Spent so far">{spendLine(run.spend)}</Fact>}
        <Fact label="Subject hash" title={wait.subjectHash}>
          <code>{shortHash(wait.subjectHash)}</code>
        </Fact>
      </dl>
      {description.budget ? (
        <div className="budget-box">
          <p>
            Stopped before the next effect: it would pass the <strong>{description.budget.ceiling}</strong> ceiling ({budgetLine(description.budget.budget)}).
          </p>
          <MeterBar used={tokensOf(description.budget.spent)} limit={description.budget.budget.maxTokens} unit="tokens" />{' '}
          {description.budget.budget.maxEffects !== undefined ? <MeterBar used={description.budget.spent.effects} limit={description.budget.budget.maxEffects} unit="effects" /> : null}{' '}
          {description.budget.budget.maxCostMicros !== undefined ? <MeterBar used={description.budget.spent.costMicros} limit={description.budget.budget.maxCostMicros} unit="" format={money} /> : null}
        </div>
      ) : null}
      {description.permission ? <PermissionDetails subject={description.permission} /> : null}
      {description.origins ? <Origins origins={description.origins} /> : null}
      {description.prompt !== null ? (
        <blockquote className="prompt">
          <span className="muted">The run asks: </span>
          {description.prompt}
        </blockquote>
      ) : null}
      {description.args !== undefined ? (
        <details open={wait.reason === 'payment' || wait.reason === 'approval' || wait.reason === 'provenance'}>
          <summary>Arguments</summary>
          <JsonBlock value={description.args} label="Arguments" />
        </details>
      ) : null}
      <Actions run={run} description={description} />
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}
