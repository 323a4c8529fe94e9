/**
 * Cumulative spend over time as an SVG step chart, drawn here (no chart library): one point per
 * run end from `spend.summary`'s timeline. The picture is described in words for assistive
 * technology, and the numbers are one click away as a table.
 */
import { useEffect, useId, useRef, useState } from 'react';
import type { SpendSummary } from '../../../src-shared/ipc/contract';
import { clockTime, count, dateTime, money } from '../lib/display-format';

/** A column of the spend timeline (every field of a point but its time). */
export type SpendMetric = Exclude<keyof SpendSummary['timeline'][number], 'at'>;

export const METRIC_LABELS: Record<SpendMetric, string> = { tokens: 'Tokens', effects: 'Effects', costMicros: 'Cost' };

const H = 220;
const PAD = { top: 14, right: 16, bottom: 28, left: 56 };

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const steps = [1, 2, 2.5, 5, 10];
  for (const step of steps) if (value <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

/** The drawing is laid out at the figure's real width, so text and points are never stretched. */
function useWidth(fallback: number) {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.max(320, Math.round(entry.contentRect.width)));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

export function SpendChart({ points, metric }: { points: SpendSummary['timeline']; metric: SpendMetric }) {
  const id = useId();
  const { ref, width: W } = useWidth(720);
  const format = (n: number) => (metric === 'costMicros' ? money(n) : count(n));
  const label = METRIC_LABELS[metric].toLowerCase();
  if (points.length === 0) {
    return (
      <figure className="chart" ref={ref}>
        <p className="muted">The chart fills in as runs spend: one point each time a run ends.</p>
      </figure>
    );
  }
  const times = points.map((p) => Date.parse(p.at));
  let t0 = Math.min(...times);
  let t1 = Math.max(...times);
  if (t1 - t0 < 1000) {
    t0 -= 30_000;
    t1 += 30_000;
  }
  const values = points.map((p) => p[metric]);
  const top = niceMax(Math.max(...values));
  const x = (t: number) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
  const baseline = y(0);
  // A step line: spend is cumulative, so it holds its level until the next run ends.
  let path = `M ${x(t0).toFixed(1)} ${baseline.toFixed(1)}`;
  points.forEach((p, i) => {
    const px = x(times[i]!);
    const prev = i === 0 ? 0 : values[i - 1]!;
    path += ` L ${px.toFixed(1)} ${y(prev).toFixed(1)} L ${px.toFixed(1)} ${y(p[metric]).toFixed(1)}`;
  });
  const lastX = x(t1);
  path += ` L ${lastX.toFixed(1)} ${y(values[values.length - 1]!).toFixed(1)}`;
  const area = `${path} L ${lastX.toFixed(1)} ${baseline.toFixed(1)} Z`;
  const yTicks = [0, top / 2, top];
  const xTicks = [t0, (t0 + t1) / 2, t1];
  const first = points[0]!;
  const last = points[points.length - 1]!;

  return (
    <figure className="chart" ref={ref}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-labelledby={`${id}-title ${id}-desc`}>
        <title id={`${id}-title`}>Cumulative {label} over time</title>
        <desc id={`${id}-desc`}>
          {`From ${format(first[metric])} at ${clockTime(first.at)} to ${format(last[metric])} at ${clockTime(last.at)} UTC, over ${points.length} run ${points.length === 1 ? 'end' : 'ends'}.`}
        </desc>
        {yTicks.map((v) => (
          <g key={v}>
            <line className="chart-grid" x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} />
            <text className="chart-label" x={PAD.left - 8} y={y(v) + 4} textAnchor="end">
              {format(v)}
            </text>
          </g>
        ))}
        {xTicks.map((t, i) => (
          <text key={t} className="chart-label" x={x(t)} y={H - 8} textAnchor={i === 0 ? 'start' : i === 2 ? 'end' : 'middle'}>
            {clockTime(new Date(t).toISOString()).slice(0, 8)}
          </text>
        ))}
        <path className="chart-area" d={area} />
        <path className="chart-line" d={path} />
        {points.map((p, i) => (
          <circle key={`${p.at}-${i}`} className="chart-point" cx={x(times[i]!)} cy={y(p[metric])} r={3}>
            <title>{`${dateTime(p.at)}: ${format(p[metric])} ${label}`}</title>
          </circle>
        ))}
      </svg>
      <details>
        <summary>Chart data</summary>
        <table className="table compact">
          <caption className="visually-hidden">Cumulative spend at each run end</caption>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
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
            {points.map((p, i) => (
              <tr key={`${p.at}-${i}`}>
                <td>{dateTime(p.at)}</td>
                <td className="num">{count(p.tokens)}</td>
                <td className="num">{count(p.effects)}</td>
                <td className="num">{money(p.costMicros)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
