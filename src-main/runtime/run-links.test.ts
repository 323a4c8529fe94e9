/**
 * Which links between runs are confirmed (run-links.ts) when the runs changed hands: on a team
 * plane a run is taken over (RunAdopted), and a peer's runs are hosted as `peer:<id>@<instance>`.
 */
import { describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src-shared/journal/records';
import { readRunHistory } from './run-history';
import { confirmsCall, hostAt } from './run-links';

let seq = 0;
const record = (runId: string, kind: JournalRecord['kind'], body: Record<string, unknown>): JournalRecord =>
  ({ seq: ++seq, runId, kind, v: 1, time: new Date(seq * 1000).toISOString(), prevHash: '', hash: '', body }) as JournalRecord;
const admitted = (runId: string, host: string, agent = 'lead') =>
  record(runId, 'RunAdmitted', { agent, owner: 'user:local', chain: ['user:local'], input: {}, inputProvenance: 'plane', budget: {}, trigger: { via: 'plane', by: 't' }, host });

describe('run links across hosts', () => {
  it('a child an agent call started is confirmed against the host that held its parent when it was admitted, before or after a takeover', () => {
    seq = 0;
    const parentRecords = [
      admitted('parent', 'plane@aaaa'),
      record('parent', 'EffectStarted', { step: 0, effect: 'agent', name: 'helper', key: 'k0', request: { agent: 'helper' } }),
    ];
    const childAtA = { agent: 'helper', host: 'plane@aaaa', seq: ++seq };
    parentRecords.push(record('parent', 'RunAdopted', { from: 'plane@aaaa', to: 'plane@bbbb', reason: 'lease ended' }));
    parentRecords.push(record('parent', 'EffectStarted', { step: 1, effect: 'agent', name: 'helper', key: 'k1', request: { agent: 'helper' } }));
    const childAtB = { agent: 'helper', host: 'plane@bbbb', seq: ++seq };
    const parent = readRunHistory(parentRecords);
    expect(parent.host).toBe('plane@bbbb');
    expect(hostAt(parent, childAtA.seq)).toBe('plane@aaaa');
    expect(hostAt(parent, childAtB.seq)).toBe('plane@bbbb');
    // Admitted at A before the takeover: confirmed (it was the parent's host then).
    expect(confirmsCall(parent, 0, childAtA, childAtA.seq)).toBe(true);
    // Admitted at B after it: confirmed too; one claiming A after the takeover is not.
    expect(confirmsCall(parent, 1, childAtB, childAtB.seq)).toBe(true);
    expect(confirmsCall(parent, 1, { agent: 'helper', host: 'plane@aaaa' }, childAtB.seq)).toBe(false);
  });

  it("a peer's skill run on a team plane (host peer:<id>@<instance>) confirms the peer call that names <id>", () => {
    seq = 0;
    const parent = readRunHistory([
      admitted('caller', 'plane@aaaa'),
      record('caller', 'EffectStarted', { step: 0, effect: 'peer', name: 'beta/ask', key: 'k', request: { peer: 'beta', skill: 'ask' } }),
    ]);
    expect(confirmsCall(parent, 0, { agent: 'skill:ask', host: 'peer:beta@aaaa' }, 10)).toBe(true);
    expect(confirmsCall(parent, 0, { agent: 'skill:ask', host: 'peer:beta' }, 10)).toBe(true);
    expect(confirmsCall(parent, 0, { agent: 'skill:ask', host: 'peer:alpha@aaaa' }, 10)).toBe(false);
  });
});
