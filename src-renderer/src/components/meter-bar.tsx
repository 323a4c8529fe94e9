/**
 * Used against a ceiling, as text ("74 / 100 tokens") with a bar beside it. The text is what
 * is read; the bar is decoration and hidden from assistive technology.
 */
import { count } from '../lib/display-format';

export function MeterBar({ used, limit, unit, format = count }: { used: number; limit?: number; unit: string; format?: (n: number) => string }) {
  if (limit === undefined) {
    return (
      <span className="meter">
        <span className="meter-text">
          {format(used)} {unit}
        </span>
      </span>
    );
  }
  const ratio = limit === 0 ? 1 : Math.min(1, used / limit);
  const tone = used >= limit ? 'bad' : ratio >= 0.8 ? 'warn' : 'ok';
  return (
    <span className="meter">
      <span className="meter-text">
        {format(used)} / {format(limit)} {unit}
        {used >= limit ? ' (at ceiling)' : ''}
      </span>
      <span className="meter-track" aria-hidden="true">
        <span className={`meter-fill meter-${tone}`} style={{ width: `${Math.round(ratio * 100)}%` }} />
      </span>
    </span>
  );
}
