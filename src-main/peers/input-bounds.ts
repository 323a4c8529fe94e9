/**
 * Bounds on what a caller may make a peer hold: how big a skill call's arguments may be, and
 * how deeply a request may nest. Both are checked on the parsed body, before anything is
 * journaled and before any recursive code (zod, canonical JSON, the history adapters) walks it.
 *
 * What is true, and why:
 *
 * - The size cap is checked before the run is admitted. A refused call must cost the journal
 *   nothing: the journal is permanent, so a refusal that still records the arguments it
 *   refused is a channel for filling the disk at the caller's pace (today one 18 MB
 *   `translate_history` cost the journal 37.8 MB, and a refused one 18.9 MB).
 * - The cap is 1 MB (10^6 bytes of JSON) for the arguments of every skill but `upload_file`,
 *   whose content is staged outside the journal and capped by the file store (16 MiB). 1 MB of
 *   text is about 250,000 tokens: a whole long conversation or document, more than most models
 *   take in one call, and 50 times the 20,000 characters `ask` used to allow. One number for
 *   every skill, so a caller can know it without knowing the skill. It bounds one call; what a
 *   caller makes the peer store over time is bounded by the request budgets (per session and
 *   per address), and above 64 KiB it goes to deletable blobs, not the journal (input-blobs.ts).
 * - Sizes are measured as the bytes of the value's JSON (UTF-8, no whitespace), iteratively:
 *   what the caller sent, independent of how this process holds it.
 * - Depth is measured iteratively too (an explicit stack, never recursion), so a body nested
 *   100,000 levels deep is measured, refused with -32602, and never reaches code that would
 *   overflow the stack on it. 64 levels is far more than any real argument needs (a Claude
 *   history with tool inputs nests about ten), and well within what every recursive walker
 *   in the plane handles.
 */
import { MAX_SKILL_ARGUMENT_BYTES } from '../../src-shared/protocol/mcpv2';

export { MAX_SKILL_ARGUMENT_BYTES };
/** How deeply a slot (the request object itself being level 1) may nest. */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests more than `max` levels of arrays and objects. Iterative. */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<[object, number]> = value !== null && typeof value === 'object' ? [[value, 1]] : [];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child as object, depth + 1]);
    }
  }
  return false;
}

/** The bytes of `JSON.stringify(value)` in UTF-8, computed without recursion. */
export function jsonBytes(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') total += stringBytes(node);
    else if (typeof node === 'number') total += Number.isFinite(node) ? String(node).length : 4;
    else if (typeof node === 'boolean') total += node ? 4 : 5;
    else if (Array.isArray(node)) {
      total += 2 + Math.max(0, node.length - 1);
      for (const child of node) stack.push(child);
    } else if (node !== null && typeof node === 'object') {
      const entries = Object.entries(node);
      total += 2 + Math.max(0, entries.length - 1);
      for (const [key, child] of entries) {
        total += stringBytes(key) + 1;
        stack.push(child);
      }
    } else total += 4; // null (and anything JSON would write as null)
  }
  return total;
}

function stringBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8');
}

/** `18.9 MB`, `1 MB`, `812 bytes`: decimal megabytes, as the caps are stated. */
export function describeBytes(bytes: number): string {
  if (bytes % 1_000_000 === 0 && bytes > 0) return `${bytes / 1_000_000} MB`;
  if (bytes >= 100_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  return `${bytes} bytes`;
}

/**
 * Why a skill call's arguments are refused for their size, or null. Names the one argument
 * that alone is over the cap (`messages is 18.9 MB; the cap is 1 MB`), else the arguments as
 * a whole. `upload_file`'s content is left out: it never enters the journal.
 */
export function argumentSizeProblem(skill: string, args: Record<string, unknown>, cap: number = MAX_SKILL_ARGUMENT_BYTES): string | null {
  const measured = skill === 'upload_file' ? Object.fromEntries(Object.entries(args).filter(([key]) => key !== 'content')) : args;
  const total = jsonBytes(measured);
  if (total <= cap) return null;
  const say = (size: number) => {
    const text = describeBytes(size);
    // 1,000,001 bytes would read "1.0 MB; the cap is 1 MB": give the bytes when rounding hides the excess.
    return text === describeBytes(cap) || text === `${(cap / 1_000_000).toFixed(1)} MB` ? `${size} bytes` : text;
  };
  for (const [key, value] of Object.entries(measured)) {
    const size = jsonBytes(value);
    if (size > cap) return `${key.slice(0, 80)} is ${say(size)}; the cap is ${describeBytes(cap)}`;
  }
  return `arguments is ${say(total)}; the cap is ${describeBytes(cap)}`;
}
