/** The profile summary every bench prints (bench/cpu-profile.ts) and serve-startup's trace parser. */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTree, scriptName, summariseProfile, withCpuProfile, type CpuProfile } from '../bench/cpu-profile';
import { medianPhases, parseStartupTrace } from '../bench/serve-startup.bench';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4] },
    { id: 2, callFrame: frame('hot', 'file:///repo/src-main/a.ts', 9) },
    { id: 3, callFrame: frame('(idle)') },
    { id: 4, callFrame: frame('parse', 'file:///repo/node_modules/zod/v4/core.js', 0), children: [5] },
    { id: 5, callFrame: frame('hot', 'file:///repo/src-main/a.ts', 9) },
  ],
  // Each sample's time is the next delta: hot 30+20, idle 100, parse 10.
  samples: [2, 5, 3, 4, 2],
  timeDeltas: [0, 30_000, 20_000, 100_000, 10_000],
};

describe('summariseProfile', () => {
  it('adds up self time per function across the tree, leaves idle out of the shares', () => {
    const summary = summariseProfile(profile, 8, '/repo');
    expect(summary.idleMs).toBe(100);
    expect(summary.busyMs).toBe(60);
    expect(summary.top.map((f) => f.where)).toEqual(['hot (src-main/a.ts:10)', 'parse (zod/v4/core.js:1)']);
    expect(summary.top[0]!.selfMs).toBe(50);
    expect(summary.top[0]!.percent).toBeCloseTo(83.33, 1);
  });

  it('groups by any key and keeps only the top entries', () => {
    const summary = summariseProfile(profile, 1, '/repo', (f) => (f.url.includes('node_modules') ? 'packages' : 'ours'));
    expect(summary.top).toEqual([{ where: 'ours', selfMs: 50, percent: expect.closeTo(83.33, 1) as number }]);
  });

  it('refuses a malformed profile', () => {
    expect(() => summariseProfile({ ...profile, timeDeltas: [0] })).toThrow(/malformed/);
    expect(() => summariseProfile({ ...profile, samples: [9, 2, 3, 4, 2] })).toThrow(/node 9/);
  });

  it('profiles real work in this process', async () => {
    const { value, profile: taken } = await withCpuProfile(async () => {
      let x = 0;
      const until = performance.now() + 30;
      while (performance.now() < until) x += Math.sqrt(x + 1);
      return x;
    });
    expect(value).toBeGreaterThan(0);
    expect(summariseProfile(taken).busyMs).toBeGreaterThan(10);
  });

  it('stops the profiler when the work fails, so the next profile can start', async () => {
    await expect(withCpuProfile(() => Promise.reject(new Error('broken bench')))).rejects.toThrow('broken bench');
    await expect(withCpuProfile(() => Promise.resolve(1))).resolves.toMatchObject({ value: 1 });
  });
});

describe('callTree', () => {
  // (root) → main → [commit → [hash, insert], commit → hash, parse → commit → hash]: one function
  // at one place in several nodes (V8 keeps one per distinct stack), and commit also called from parse.
  const tree: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 9] },
      { id: 2, callFrame: frame('main', 'file:///repo/m.ts', 0), children: [3, 6, 7] },
      { id: 3, callFrame: frame('commit', 'file:///repo/c.ts', 4), children: [4, 5] },
      { id: 4, callFrame: frame('hash', 'file:///repo/h.ts', 1) },
      { id: 5, callFrame: frame('insert', 'file:///repo/c.ts', 20) },
      { id: 6, callFrame: frame('commit', 'file:///repo/c.ts', 4), children: [10] },
      { id: 7, callFrame: frame('parse', 'file:///repo/p.ts', 0), children: [8] },
      { id: 8, callFrame: frame('commit', 'file:///repo/c.ts', 4), children: [11] },
      { id: 9, callFrame: frame('(idle)') },
      { id: 10, callFrame: frame('hash', 'file:///repo/h.ts', 1) },
      { id: 11, callFrame: frame('hash', 'file:///repo/h.ts', 1) },
    ],
    // Times (the next delta): hash 10 (node 4), insert 20, commit 5 (node 6), hash 7 (node 10),
    // parse 3, hash 4 (node 11), idle 50, commit 1 (node 3).
    samples: [4, 5, 6, 10, 7, 11, 9, 3],
    timeDeltas: [0, 10_000, 20_000, 5_000, 7_000, 3_000, 4_000, 50_000],
  };
  // The last sample has no next delta: it counts 0, as in summariseProfile.
  const at = (lines: ReturnType<typeof callTree>) => lines.map((l) => `${l.depth} ${l.where.split(' ')[0]} ${l.totalMs}/${l.selfMs}`);

  it('merges the nodes of one function at one place and orders children by total time', () => {
    expect(at(callTree(tree, { repoRoot: '/repo' }))).toEqual([
      '0 (root) 99/0',
      '1 (idle) 50/50',
      '1 main 49/0',
      '2 commit 42/5',
      '3 insert 20/20',
      '3 hash 17/17',
      '2 parse 7/3',
      '3 commit 4/0',
      '4 hash 4/4',
    ]);
  });

  it('starts from every outermost call of a matching function, wherever it was called from', () => {
    expect(at(callTree(tree, { root: /^commit$/, repoRoot: '/repo' }))).toEqual(['0 commit 46/5', '1 hash 21/21', '1 insert 20/20']);
    expect(callTree(tree, { root: /^nothing$/ })).toEqual([]);
  });

  it('leaves out small places and stops at a depth', () => {
    expect(at(callTree(tree, { minMs: 10, repoRoot: '/repo' }))).toEqual(['0 (root) 99/0', '1 (idle) 50/50', '1 main 49/0', '2 commit 42/5', '3 insert 20/20', '3 hash 17/17']);
    expect(at(callTree(tree, { maxDepth: 1, repoRoot: '/repo' }))).toEqual(['0 (root) 99/0', '1 (idle) 50/50', '1 main 49/0']);
  });

  it('refuses a malformed profile', () => {
    expect(() => callTree({ ...tree, timeDeltas: [0] })).toThrow(/malformed/);
    expect(() => callTree({ ...tree, samples: [99, 5, 6, 10, 7, 11, 9, 3] })).toThrow(/node 99/);
  });

  it('is printed for a saved profile by npm run profile, which names bad arguments', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'agentplane-profile-')), 'tree.cpuprofile');
    writeFileSync(file, JSON.stringify(tree));
    const cli = ['--import', 'tsx', 'bench/profile-tree.ts'];
    const out = execFileSync(process.execPath, [...cli, file, '--root', '^commit$', '--per', '2000', '--min-ms', '0'], { encoding: 'utf8' });
    expect(out).toContain('times below are per one of 2000');
    expect(out).toMatch(/call tree under \/\^commit\$\/ \(total, self\):\n\s+23\.00 µs\s+2\.50 µs {2}commit \(\/repo\/c\.ts:5\)/);
    const bad = spawnSync(process.execPath, [...cli, file, '--per', '0'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--per must be a number above 0, not "0"');
    const missing = spawnSync(process.execPath, [...cli, join(file, '..', 'none.cpuprofile')], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/none\.cpuprofile could not be read as a CPU profile/);
  });
});

describe('scriptName', () => {
  it("names a page's script by its file, query left out", () => {
    expect(scriptName('http://127.0.0.1:4000/assets/peers-view-3f2a.js?v=1')).toBe('peers-view-3f2a.js');
    expect(scriptName('file:///repo/out/renderer/index.html')).toBe('index.html');
  });

  it('keeps a name that is no URL (a driver-injected script) instead of throwing', () => {
    expect(scriptName('__playwright_evaluation_script__')).toBe('__playwright_evaluation_script__');
    expect(scriptName('VM12')).toBe('VM12');
    expect(scriptName('http://127.0.0.1:4000/')).toBe('http://127.0.0.1:4000/');
  });
});

describe('parseStartupTrace', () => {
  it('turns marks into phase durations and ignores other stderr lines', () => {
    const stderr = 'agentplane-startup cli.modules-loaded 700.5\nsome warning\nagentplane-startup plane.ready 900.5\n';
    expect(parseStartupTrace(stderr)).toEqual([
      { phase: 'cli.modules-loaded', ms: 700.5 },
      { phase: 'plane.ready', ms: 200 },
    ]);
  });

  it('refuses a malformed or backwards trace', () => {
    expect(() => parseStartupTrace('agentplane-startup plane.ready soon\n')).toThrow(/malformed/);
    expect(() => parseStartupTrace('agentplane-startup a 10\nagentplane-startup b 5\n')).toThrow(/backwards/);
  });

  it('takes each phase median over rounds', () => {
    const rounds = [10, 30, 20].map((ms) => [{ phase: 'x', ms }]);
    expect(medianPhases(rounds)).toEqual([{ phase: 'x', ms: 20 }]);
  });
});
