/**
 * A line diff of a tool call's edit (ACP `diff` content: path, oldText or null for a new file,
 * newText), as unified-diff hunks with context lines, for the Editor sessions view.
 *
 * Bounded, because it runs on the renderer's thread and the texts come from an agent: common
 * leading and trailing lines are trimmed first (an edit usually touches a few lines of a long
 * file), the middle is diffed by Myers' algorithm up to MAX_EDITS edits, past that by a
 * longest-common-subsequence table while it has at most MAX_CELLS cells, and otherwise shown as
 * one replaced block (correct, only coarser; `coarse` says so). Past `maxLines` lines on either side nothing is diffed at all and
 * the answer is a summary (`tooLarge`), so no input can freeze the window.
 */

export interface DiffLine {
  type: 'context' | 'add' | 'del';
  text: string;
  /** 1-based line numbers in the old and new text (null where the line is not in that side). */
  oldNo: number | null;
  newNo: number | null;
}

export interface DiffHunk {
  /** As in `@@ -oldStart,oldLines +newStart,newLines @@` (a start of 0 with 0 lines: an empty side). */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export type UnifiedDiff =
  | { kind: 'hunks'; newFile: boolean; hunks: DiffHunk[]; added: number; removed: number; coarse: boolean }
  | { kind: 'tooLarge'; newFile: boolean; oldLines: number; newLines: number };

export const DEFAULT_CONTEXT = 3;
export const DEFAULT_MAX_LINES = 5000;
/** The largest LCS table built (cells): 4M 16-bit cells is 8 MB and well under 100 ms. */
const MAX_CELLS = 4_000_000;

/** A text's lines; a final newline ends the last line rather than starting an empty one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

type Op = { type: DiffLine['type']; text: string };

/**
 * Myers' O(ND) greedy diff with each round's furthest-reaching paths kept for the walk back: a
 * few scattered edits in a long file cost a few rounds. Gives up (null) past `maxD` rounds,
 * which bounds both time and the kept rounds (about maxD² numbers).
 */
function myersOps(a: string[], b: string[], maxD: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  const offset = maxD + 1;
  let v = new Int32Array(2 * offset + 1);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= maxD; d++) {
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        trace.push(next);
        return walkBack(trace, a, b, offset);
      }
    }
    trace.push(next);
    v = next;
  }
  return null;
}

function walkBack(trace: Int32Array[], a: string[], b: string[], offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d > 0; d--) {
    const v = trace[d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ type: 'context', text: a[--x]! });
      y--;
    }
    if (down) ops.push({ type: 'add', text: b[--y]! });
    else ops.push({ type: 'del', text: a[--x]! });
  }
  while (x > 0 && y > 0) {
    ops.push({ type: 'context', text: a[--x]! });
    y--;
  }
  return ops.reverse();
}

/** Myers gives up past this many edits; then the LCS table, or one replaced block. */
const MAX_EDITS = 2000;

/** The edit script turning a into b (both already trimmed of their common ends). */
function middleOps(a: string[], b: string[]): { ops: Op[]; coarse: boolean } {
  const n = a.length;
  const m = b.length;
  if (n === 0) return { ops: b.map((text) => ({ type: 'add', text })), coarse: false };
  if (m === 0) return { ops: a.map((text) => ({ type: 'del', text })), coarse: false };
  const fast = myersOps(a, b, Math.min(MAX_EDITS, n + m));
  if (fast) return { ops: fast, coarse: false };
  if ((n + 1) * (m + 1) > MAX_CELLS) {
    return { ops: [...a.map((text): Op => ({ type: 'del', text })), ...b.map((text): Op => ({ type: 'add', text }))], coarse: true };
  }
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..]; lengths fit 16 bits (maxLines).
  const width = m + 1;
  const lcs = new Uint16Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ type: 'context', text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
      // Deletions before additions, as diff(1) prints them.
      ops.push({ type: 'del', text: a[i++]! });
    } else ops.push({ type: 'add', text: b[j++]! });
  }
  while (i < n) ops.push({ type: 'del', text: a[i++]! });
  while (j < m) ops.push({ type: 'add', text: b[j++]! });
  return { ops, coarse: false };
}

/** Numbers the script's lines and cuts it into hunks of changes with `context` lines around each. */
function hunksOf(ops: Op[], context: number): DiffHunk[] {
  const lines: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  for (const op of ops) {
    if (op.type === 'context') lines.push({ ...op, oldNo: ++oldNo, newNo: ++newNo });
    else if (op.type === 'del') lines.push({ ...op, oldNo: ++oldNo, newNo: null });
    else lines.push({ ...op, oldNo: null, newNo: ++newNo });
  }
  const hunks: DiffHunk[] = [];
  let k = 0;
  while (k < lines.length) {
    if (lines[k]!.type === 'context') {
      k++;
      continue;
    }
    const start = Math.max(0, k - context);
    // Extend while the next change is within 2 × context lines of the last one: one hunk.
    let end = k;
    let lastChange = k;
    while (end + 1 < lines.length && end + 1 - lastChange <= 2 * context) {
      end++;
      if (lines[end]!.type !== 'context') lastChange = end;
    }
    end = Math.min(lines.length - 1, lastChange + context);
    const slice = lines.slice(start, end + 1);
    hunks.push(hunkOf(slice, lines, start));
    k = end + 1;
  }
  return hunks;
}

function hunkOf(slice: DiffLine[], all: DiffLine[], start: number): DiffHunk {
  const oldLines = slice.filter((l) => l.type !== 'add').length;
  const newLines = slice.filter((l) => l.type !== 'del').length;
  // A side with no lines in the hunk starts at the line before it (diff(1)'s convention).
  const firstOld = slice.find((l) => l.oldNo !== null)?.oldNo;
  const firstNew = slice.find((l) => l.newNo !== null)?.newNo;
  const before = all.slice(0, start);
  const oldBefore = before.filter((l) => l.oldNo !== null).length;
  const newBefore = before.filter((l) => l.newNo !== null).length;
  return {
    oldStart: oldLines > 0 ? firstOld! : oldBefore,
    oldLines,
    newStart: newLines > 0 ? firstNew! : newBefore,
    newLines,
    lines: slice,
  };
}

/** The hunks turning `oldText` (null: the file is new) into `newText`. */
export function unifiedDiff(oldText: string | null, newText: string, options: { context?: number; maxLines?: number } = {}): UnifiedDiff {
  const context = options.context ?? DEFAULT_CONTEXT;
  const maxLines = Math.min(options.maxLines ?? DEFAULT_MAX_LINES, 65_535);
  const newFile = oldText === null;
  const a = splitLines(oldText ?? '');
  const b = splitLines(newText);
  if (a.length > maxLines || b.length > maxLines) return { kind: 'tooLarge', newFile, oldLines: a.length, newLines: b.length };
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const middle = middleOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  const ops: Op[] = [
    ...a.slice(0, head).map((text): Op => ({ type: 'context', text })),
    ...middle.ops,
    ...a.slice(a.length - tail).map((text): Op => ({ type: 'context', text })),
  ];
  const added = middle.ops.filter((o) => o.type === 'add').length;
  const removed = middle.ops.filter((o) => o.type === 'del').length;
  return { kind: 'hunks', newFile, hunks: hunksOf(ops, context), added, removed, coarse: middle.coarse };
}

/** The diff as `diff -u` text (for copying): headers, `@@` lines, and ` `, `-`, `+` lines. */
export function formatUnifiedDiff(path: string, diff: UnifiedDiff): string {
  const header = `--- ${diff.newFile ? '/dev/null' : `a/${path}`}\n+++ b/${path}\n`;
  if (diff.kind === 'tooLarge') return `${header}# too large to diff here: ${diff.oldLines} old lines, ${diff.newLines} new lines\n`;
  const body = diff.hunks
    .map((h) => `${hunkHeader(h)}\n${h.lines.map((l) => `${l.type === 'add' ? '+' : l.type === 'del' ? '-' : ' '}${l.text}`).join('\n')}`)
    .join('\n');
  return `${header}${body}${body ? '\n' : ''}`;
}

export function hunkHeader(h: DiffHunk): string {
  return `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`;
}
