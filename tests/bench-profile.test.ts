/** The profile summary every bench prints (bench/cpu-profile.ts) and serve-startup's trace parser. */
import { describe, expect, it } from 'vitest';
import { scriptName, summariseProfile, withCpuProfile, type CpuProfile } from '../bench/cpu-profile';
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
