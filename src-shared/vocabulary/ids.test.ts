import { describe, expect, it } from 'vitest';
import { commands } from '../ipc/contract';
import { describeZodError } from '../ipc/errors';
import { isRunId, PeerIdSchema, RunIdSchema, WaitIdSchema, waitIdOf, waitIdParts } from './ids';

const RUN = 'run-0123456789abcdef0123';

describe('ids', () => {
  it('reads a run id, a wait id and a peer id, and refuses look-alikes', () => {
    expect(isRunId(RUN)).toBe(true);
    for (const bad of ['run-0123456789ABCDEF0123', 'run-0123', `${RUN}0`, ` ${RUN}`]) expect(RunIdSchema.safeParse(bad).success, bad).toBe(false);
    expect(WaitIdSchema.safeParse(`${RUN}/0/approval`).success).toBe(true);
    for (const bad of [`${RUN}/01/approval`, `${RUN}/1/approve`, `${RUN}/-1/input`, `run-1/1/input`, `${RUN}/1`]) expect(WaitIdSchema.safeParse(bad).success, bad).toBe(false);
    expect(PeerIdSchema.safeParse('alpha-2').success).toBe(true);
    for (const bad of ['Alpha', '2alpha', 'a'.repeat(41), 'al pha', '']) expect(PeerIdSchema.safeParse(bad).success, bad).toBe(false);
  });

  it('makes a wait id from its parts and reads them back', () => {
    const waitId = waitIdOf(RUN, 12, 'budget');
    expect(waitId).toBe(`${RUN}/12/budget`);
    expect(waitIdParts(waitId)).toEqual({ runId: RUN, step: 12, reason: 'budget' });
    expect(waitIdParts(`${RUN}/12/bribe`)).toBeNull();
  });

  it("the contract refuses a malformed id at the door, saying what an id looks like", () => {
    const refusal = (parsed: { success: boolean; error?: Parameters<typeof describeZodError>[0] }) => (parsed.success ? 'accepted' : describeZodError(parsed.error!));
    expect(refusal(commands['runs.get'].request.safeParse({ runId: 'run-42' }))).toBe('runId: a run id: run- and 20 lowercase hex digits');
    expect(refusal(commands['peers.start'].request.safeParse({ id: 'Alpha!' }))).toContain('id: a peer id: lowercase letters');
    expect(refusal(commands['peers.call'].request.safeParse({ from: 'alpha', to: 'BETA', skill: 'ask' }))).toContain('to: a peer id');
    const decide = { runId: RUN, waitId: `${RUN}/3/approval`, decision: 'approve', subjectHash: 'a'.repeat(64) };
    expect(refusal(commands['approvals.decide'].request.safeParse(decide))).toBe('accepted');
    expect(refusal(commands['approvals.decide'].request.safeParse({ ...decide, waitId: 'w1' }))).toBe('waitId: a wait id: <runId>/<step>/<reason>');
    expect(refusal(commands['approvals.decide'].request.safeParse({ ...decide, decision: 'maybe' }))).toContain('decision: ');
    expect(refusal(commands['peers.create'].request.safeParse({ id: 'x_y', port: 1 }))).toContain('id: a peer id');
  });
});
