import { describe, expect, it } from 'vitest';
import { formatUnifiedDiff, splitLines, unifiedDiff } from './unified-diff';

const lines = (n: number, f = (i: number) => `line ${i}`) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

describe('a tool call edit as unified-diff hunks', () => {
  it('splits text into lines, a final newline ending the last line', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\r\nb')).toEqual(['a', 'b']);
  });

  it('one changed line in a long file: one hunk with three context lines each side', () => {
    const before = lines(20);
    const after = before.replace('line 10\n', 'line ten\n');
    const diff = unifiedDiff(before, after);
    expect(diff.kind).toBe('hunks');
    if (diff.kind !== 'hunks') return;
    expect(diff).toMatchObject({ added: 1, removed: 1, coarse: false, newFile: false });
    expect(diff.hunks).toHaveLength(1);
    const [hunk] = diff.hunks;
    expect(hunk).toMatchObject({ oldStart: 7, oldLines: 7, newStart: 7, newLines: 7 });
    expect(hunk!.lines.map((l) => `${l.type[0]}${l.text}`)).toEqual(['cline 7', 'cline 8', 'cline 9', 'dline 10', 'aline ten', 'cline 11', 'cline 12', 'cline 13']);
    expect(formatUnifiedDiff('src/a.txt', diff)).toBe(
      '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n',
    );
  });

  it('changes far apart are separate hunks; close ones share one', () => {
    const before = lines(40);
    const far = unifiedDiff(before, before.replace('line 5\n', 'five\n').replace('line 30\n', 'thirty\n'));
    expect(far.kind === 'hunks' && far.hunks.map((h) => [h.oldStart, h.oldLines])).toEqual([
      [2, 7],
      [27, 7],
    ]);
    const near = unifiedDiff(before, before.replace('line 5\n', 'five\n').replace('line 9\n', 'nine\n'));
    expect(near.kind === 'hunks' && near.hunks.length).toBe(1);
  });

  it('an insertion and a deletion carry the right line numbers', () => {
    const diff = unifiedDiff('a\nb\nc\n', 'a\nx\nb\n');
    expect(diff.kind === 'hunks' && diff.hunks[0]!.lines).toEqual([
      { type: 'context', text: 'a', oldNo: 1, newNo: 1 },
      { type: 'add', text: 'x', oldNo: null, newNo: 2 },
      { type: 'context', text: 'b', oldNo: 2, newNo: 3 },
      { type: 'del', text: 'c', oldNo: 3, newNo: null },
    ]);
  });

  it('oldText null is a new file: every line added, from /dev/null', () => {
    const diff = unifiedDiff(null, 'one\ntwo\n');
    expect(diff).toMatchObject({ kind: 'hunks', newFile: true, added: 2, removed: 0 });
    expect(formatUnifiedDiff('new.txt', diff)).toBe('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n');
  });

  it('identical texts have no hunks', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n')).toMatchObject({ kind: 'hunks', hunks: [], added: 0, removed: 0 });
  });

  it('an emptied file removes every line', () => {
    const diff = unifiedDiff('a\nb\n', '');
    expect(diff.kind === 'hunks' && diff.hunks[0]).toMatchObject({ oldStart: 1, oldLines: 2, newStart: 0, newLines: 0 });
  });

  it('past the line cap it answers with a summary instead of diffing', () => {
    const started = Date.now();
    const diff = unifiedDiff(lines(6000), lines(6000, (i) => `other ${i}`));
    expect(diff).toEqual({ kind: 'tooLarge', newFile: false, oldLines: 6000, newLines: 6000 });
    expect(formatUnifiedDiff('big.txt', diff)).toContain('too large to diff here');
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('a large, wholly rewritten middle is one replaced block, quickly (coarse)', () => {
    const started = Date.now();
    const diff = unifiedDiff(lines(4500), lines(4500, (i) => `other ${i}`));
    expect(diff).toMatchObject({ kind: 'hunks', coarse: true, added: 4500, removed: 4500 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('a few thousand lines with scattered edits are diffed exactly within a fraction of a second', () => {
    const before = lines(3000);
    const after = before.replace('line 100\n', 'x\n').replace('line 1500\n', '').replace('line 2900\n', 'line 2900\nadded\n');
    const started = Date.now();
    const diff = unifiedDiff(before, after);
    expect(diff).toMatchObject({ kind: 'hunks', coarse: false, added: 2, removed: 2 });
    expect(diff.kind === 'hunks' && diff.hunks).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('random edits: the hunks always rebuild both texts (context 100000 gives one hunk of everything)', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (let round = 0; round < 200; round++) {
      const a = Array.from({ length: rand(30) }, () => `l${rand(6)}`);
      const b = a.flatMap((l) => (rand(4) === 0 ? [] : rand(5) === 0 ? [l, `n${rand(6)}`] : [l]));
      const diff = unifiedDiff(a.join('\n'), b.join('\n'), { context: 100_000 });
      if (diff.kind !== 'hunks') throw new Error('unexpected');
      const all = diff.hunks.flatMap((h) => h.lines);
      if (diff.hunks.length === 0) expect(a).toEqual(b);
      else {
        expect(all.filter((l) => l.type !== 'add').map((l) => l.text)).toEqual(a);
        expect(all.filter((l) => l.type !== 'del').map((l) => l.text)).toEqual(b);
      }
    }
  });
});
