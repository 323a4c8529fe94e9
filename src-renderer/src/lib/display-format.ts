/**
 * How values read on screen: times, durations, token counts, costs and hashes. One place, so
 * every view says "1.2k tokens" and "$0.0004" the same way.
 */
import { tokensOf, type Budget, type Spend } from '../../../src-shared/vocabulary/spend';

/**
 * Times are shown in UTC in one fixed English form, so they are written out here from the
 * instant's UTC fields rather than through Intl.DateTimeFormat: building a formatter loads the
 * locale's data from ICU, measured at about 20 ms on the page's main thread as the first view
 * loads (bench renderer-load), and its output differs between ICU versions ("Sep" or "Sept"),
 * which a fixed form must not.
 */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const two = (n: number) => String(n).padStart(2, '0');
const hms = (d: Date) => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;

/** `13:39:34.512` (UTC): dense enough for a timeline row, exact to the millisecond. */
export function clockTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const d = new Date(ms);
  return `${hms(d)}.${String(d.getUTCMilliseconds()).padStart(3, '0')}`;
}

/** `30 Nov 2026, 13:39:34 UTC`. */
export function dateTime(iso: string | number): string {
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hms(d)} UTC`;
}

/** `3 s`, `4 min`, `2 h 5 min`, `3 d`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** `12 s ago`, `in 5 min`. */
export function relative(iso: string | number, now: number): string {
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (Number.isNaN(ms)) return String(iso);
  const delta = now - ms;
  // Within a few seconds either way is "just now": the plane's clock and this window's may differ slightly.
  if (delta > -5000 && delta < 1000) return 'just now';
  return delta >= 0 ? `${duration(delta)} ago` : `in ${duration(-delta)}`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Micro-units to a currency amount: 1,000,000 = $1. Small amounts keep their digits. */
export function money(micros: number): string {
  const value = micros / 1_000_000;
  if (micros === 0) return '$0';
  if (value < 0.01) return `$${value.toFixed(6).replace(/0+$/, '')}`;
  return `$${value.toFixed(2)}`;
}

export function shortHash(hash: string): string {
  return `${hash.slice(0, 8)}…${hash.slice(-4)}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** `74 tokens, 3 effects, $0` */
export function spendLine(spend: Spend): string {
  return `${plural(tokensOf(spend), 'token')}, ${plural(spend.effects, 'effect')}, ${money(spend.costMicros)}`;
}

/** The ceilings of a budget in words, or "no ceiling". */
export function budgetLine(budget: Budget): string {
  const parts: string[] = [];
  if (budget.maxTokens !== undefined) parts.push(plural(budget.maxTokens, 'token'));
  if (budget.maxEffects !== undefined) parts.push(plural(budget.maxEffects, 'effect'));
  if (budget.maxCostMicros !== undefined) parts.push(money(budget.maxCostMicros));
  return parts.length > 0 ? parts.join(', ') : 'no ceiling';
}

/** Compact JSON for one line of a table cell (never for the hashed form: see canonicalize). */
export function oneLineJson(value: unknown, max = 160): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    return String(value);
  }
}
