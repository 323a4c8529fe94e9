/**
 * Every slice survives every way a command can fail: a refusal with each stable error code
 * (src-shared/ipc/errors.ts), an answer outside the contract, and no answer at all. Each failure
 * lands where the view shows it, as the plane's message, and the store keeps working after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyErrorBody, type ScriptedFailure } from '../../../tests/support/contract-support';
import { runDrafts } from '../../../tests/support/journal-support';
import { testPlane } from '../../../tests/support/runtime-support';
import type { CommandName } from '../../../src-shared/ipc/contract';
import type { AppState } from './app-store';
import { storeHarness, type StoreHarness } from './testing/store-harness';

let h: StoreHarness;
const RUN = 'run-00000000000000000abc';

beforeAll(async () => {
  h = await storeHarness({ plane: await testPlane({ agents: [] }) });
  await h.until(() => h.store.getState().runsLoaded && h.store.getState().connection === 'connected', 'the first sync');
  await h.plane.journal.appendBatch(runDrafts(RUN, 3));
  await h.store.getState().createPeer({ id: 'gamma', port: 0 });
  await h.settle();
});
afterAll(async () => {
  await h.close();
});

const failures: Array<{ label: string; failure: ScriptedFailure; message: RegExp }> = [
  // A busy port is phrased for the Peers view where it can happen (lib/peer-errors.ts).
  ...everyErrorBody.map((body) => ({
    label: body.code,
    failure: body,
    message: body.code === 'AP_PORT_IN_USE' ? /^scripted AP_PORT_IN_USE(: choose another port or enable 'use the next free port'\.)?$/ : new RegExp(`^scripted ${body.code}$`),
  })),
  { label: 'an answer outside the contract', failure: 'malformed' as const, message: /does not match the contract/ },
  { label: 'no answer', failure: 'unreachable' as const, message: /^plane unreachable: / },
];

/** Each slice: the command it sends, how to make it send it, and where the failure shows. */
const slices: Array<{ slice: string; command: CommandName; act(): Promise<unknown>; shown(state: AppState): string | null | undefined }> = [
  { slice: 'runs', command: 'runs.list', act: () => h.store.getState().refreshRuns(), shown: (s) => s.runsError },
  { slice: 'approvals', command: 'approvals.list', act: () => h.store.getState().refreshWaiting(), shown: (s) => s.waitingError },
  { slice: 'spend', command: 'spend.summary', act: () => h.store.getState().refreshSpend(), shown: (s) => s.spendError },
  { slice: 'peers', command: 'peers.stop', act: () => h.store.getState().peerAction('gamma', 'stop'), shown: (s) => s.peerErrors.gamma },
  {
    slice: 'timeline',
    command: 'journal.records',
    act: async () => {
      h.store.getState().closeTimeline();
      h.store.getState().openTimeline(RUN);
      await h.settle();
    },
    shown: (s) => s.timeline.error,
  },
  { slice: 'plane', command: 'plane.status', act: () => h.store.getState().refreshStatus(), shown: (s) => s.error },
];

describe('a command failing', () => {
  for (const { slice, command, act, shown } of slices) {
    for (const { label, failure, message } of failures) {
      it(`${slice} (${command}): ${label}`, async () => {
        h.wire.fail(command, failure);
        try {
          await act();
          await h.settle();
          expect(shown(h.store.getState())).toMatch(message);
        } finally {
          h.wire.fail(command, null);
        }
        // And it recovers once the plane answers again.
        await act();
        await h.settle();
        if (slice !== 'peers') expect(shown(h.store.getState()) ?? null).toBeNull();
      });
    }
  }

  it('the store still follows the journal after all of it', async () => {
    await h.plane.journal.appendBatch(runDrafts('run-00000000000000000abd', 1));
    await h.until(() => h.env.clock.pending() > 0, 'the notification');
    h.env.clock.advance(100);
    await h.settle();
    expect(h.store.getState().runs['run-00000000000000000abd']).toMatchObject({ status: 'sealed' });
  });
});
