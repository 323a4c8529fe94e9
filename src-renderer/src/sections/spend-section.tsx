/**
 * Spend: effects, tokens and cost per run, per agent and per peer, against their ceilings, and
 * cumulative over time. A run stopped at its ceiling links to its inbox item, where the person
 * raises the ceiling or stops the run.
 */
import { useEffect, useId, useState } from 'react';
import type { SpendSummary } from '../../../src-shared/ipc/contract';
import { EmptyState } from '../components/empty-state';
import { MeterBar } from '../components/meter-bar';
import { count, money } from '../lib/display-format';
import { tokensOf } from '../../../src-shared/vocabulary/spend';
import { paymentAmount } from '../../../src-shared/vocabulary/payments';
import { useApp } from '../store/store-context';
import { RunStatus } from './run-status';
import { METRIC_LABELS, SpendChart, type SpendMetric } from './spend-chart';

const RUN_ROWS = 50;

function Totals({ spend }: { spend: SpendSummary }) {
  const runs = spend.byRun.length;
  const cards: Array<[string, string]> = [
    ['Tokens', count(tokensOf(spend.total))],
    ['Effects', count(spend.total.effects)],
    ['Cost', money(spend.total.costMicros)],
    ['Runs', count(runs)],
  ];
  return (
    <dl className="totals">
      {cards.map(([label, value]) => (
        <div key={label} className="total-card">
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Payment intents on their own line, per currency: never added to model cost. */
function PaymentIntents({ rows }: { rows: SpendSummary['paymentIntents'] }) {
  if (rows.length === 0) return null;
  return (
    <section className="payment-intents" aria-label="Payment intents">
      <h2>Payment intents</h2>
      <ul>
        {rows.map((row) => (
          <li key={row.currency}>
            intents approved: {paymentAmount(row.approved, row.currency)}, moved: {row.moved === 0 ? '0' : paymentAmount(row.moved, row.currency)}
            {row.pendingCount > 0 ? `; pending approval: ${paymentAmount(row.pending, row.currency)} (${count(row.pendingCount)})` : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}

function GroupTable({ title, rows, keyLabel }: { title: string; rows: SpendSummary['byAgent']; keyLabel: string }) {
  const id = useId();
  return (
    <section className="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {rows.length === 0 ? (
        <p className="muted">Nothing yet.</p>
      ) : (
        <table className="table compact">
          <thead>
            <tr>
              <th scope="col">{keyLabel}</th>
              <th scope="col" className="num">
                Runs
              </th>
              <th scope="col" className="num">
                Tokens
              </th>
              <th scope="col" className="num">
                Effects
              </th>
              <th scope="col" className="num">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key}>
                <th scope="row">{row.key}</th>
                <td className="num">{count(row.runs)}</td>
                <td className="num">{count(tokensOf(row.spend))}</td>
                <td className="num">{count(row.spend.effects)}</td>
                <td className="num">{money(row.spend.costMicros)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RunTable({ rows }: { rows: SpendSummary['byRun'] }) {
  const id = useId();
  const runs = useApp((s) => s.runs);
  const openRun = useApp((s) => s.openRun);
  const navigate = useApp((s) => s.navigate);
  const setFocusWait = useApp((s) => s.setFocusWait);
  const [all, setAll] = useState(false);
  // Runs stopped at a ceiling first: they are waiting for someone.
  const ordered = [...rows].sort((a, b) => Number(runs[b.key]?.pending?.reason === 'budget') - Number(runs[a.key]?.pending?.reason === 'budget'));
  const shown = all ? ordered : ordered.slice(0, RUN_ROWS);
  return (
    <section className="panel" aria-labelledby={id}>
      <h2 id={id}>By run, against its ceilings</h2>
      <table className="table compact">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Agent</th>
            <th scope="col">Status</th>
            <th scope="col">Tokens</th>
            <th scope="col">Effects</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((row) => {
            const run = runs[row.key];
            const budget = row.budget ?? {};
            const atCeiling = run?.pending?.reason === 'budget';
            return (
              <tr key={row.key} className={atCeiling ? 'row-attention' : undefined}>
                <th scope="row">
                  <button type="button" className="link-button mono" onClick={() => openRun(row.key)}>
                    {row.key}
                  </button>
                </th>
                <td>{run?.agent ?? '—'}</td>
                <td>
                  {run ? <RunStatus run={run} /> : '—'}
                  {atCeiling ? (
                    <div className="ceiling-choice">
                      Stopped at its ceiling.{' '}
                      <button
                        type="button"
                        className="link-button"
                        onClick={() => {
                          setFocusWait(row.key);
                          navigate({ section: 'approvals' });
                        }}
                      >
                        Raise it or stop the run
                      </button>
                    </div>
                  ) : null}
                </td>
                <td>
                  <MeterBar used={tokensOf(row.spend)} limit={budget.maxTokens} unit="" />
                </td>
                <td>
                  <MeterBar used={row.spend.effects} limit={budget.maxEffects} unit="" />
                </td>
                <td>
                  <MeterBar used={row.spend.costMicros} limit={budget.maxCostMicros} unit="" format={money} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {ordered.length > RUN_ROWS ? (
        <button type="button" className="button small" onClick={() => setAll((a) => !a)}>
          {all ? `Show the first ${RUN_ROWS}` : `Show all ${count(ordered.length)} runs`}
        </button>
      ) : null}
    </section>
  );
}

export function SpendSection({ empty }: { empty: string }) {
  const id = useId();
  const spend = useApp((s) => s.spend);
  const error = useApp((s) => s.spendError);
  const watchSpend = useApp((s) => s.watchSpend);
  const [metric, setMetric] = useState<SpendMetric>('tokens');
  useEffect(() => watchSpend(), [watchSpend]);

  if (error && !spend) {
    return (
      <p className="inline-error" role="alert">
        Could not read spend: {error}
      </p>
    );
  }
  if (!spend) return <p className="muted">Loading spend…</p>;
  if (spend.byRun.length === 0) return <EmptyState text={empty} />;
  return (
    <div className="section-body">
      <Totals spend={spend} />
      <PaymentIntents rows={spend.paymentIntents} />
      <section className="panel" aria-labelledby={`${id}-chart`}>
        <div className="panel-head">
          <h2 id={`${id}-chart`}>Over time</h2>
          <div className="segmented" role="radiogroup" aria-label="Chart metric">
            {(Object.keys(METRIC_LABELS) as SpendMetric[]).map((m) => (
              <label key={m} className={metric === m ? 'segment segment-on' : 'segment'}>
                <input type="radio" name={`${id}-metric`} value={m} checked={metric === m} onChange={() => setMetric(m)} />
                {METRIC_LABELS[m]}
              </label>
            ))}
          </div>
        </div>
        <SpendChart points={spend.timeline} metric={metric} />
      </section>
      <RunTable rows={spend.byRun} />
      <div className="two-columns">
        <GroupTable title="By agent" rows={spend.byAgent} keyLabel="Agent" />
        <GroupTable title="By peer" rows={spend.byPeer} keyLabel="Peer" />
      </div>
    </div>
  );
}
