import { describe, expect, it } from 'vitest';
import { STARTUP_TRACE_ENV, startupMark } from './startup-trace';

describe('startupMark', () => {
  it('writes nothing unless AGENTPLANE_STARTUP_TRACE=1', () => {
    const lines: string[] = [];
    startupMark('plane.ready', {}, (l) => lines.push(l));
    startupMark('plane.ready', { [STARTUP_TRACE_ENV]: 'yes' }, (l) => lines.push(l));
    expect(lines).toEqual([]);
  });

  it('writes one line with the phase and the ms since the process started', () => {
    const lines: string[] = [];
    startupMark('serve.bridge-listen', { [STARTUP_TRACE_ENV]: '1' }, (l) => lines.push(l));
    expect(lines).toHaveLength(1);
    const match = /^agentplane-startup serve\.bridge-listen (\d+\.\d)\n$/.exec(lines[0]!);
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBeGreaterThan(0);
    expect(Number(match![1])).toBeLessThanOrEqual(performance.now());
  });

  it('refuses a phase name that is not a fixed word (so nothing else can reach stderr through it)', () => {
    expect(() => startupMark('token=abc', { [STARTUP_TRACE_ENV]: '1' }, () => undefined)).toThrow(/lowercase letters/);
  });
});
