/**
 * How runs link to one another: a plane run's peer call and the skill run the peer admitted for
 * it, and a run's agent tool call and the child run it started (agent-effect.ts). The callee's RunAdmitted names its parent (`parentRunId`, `parentStep`) as the caller
 * stated it in the call's `context.caller`. That statement is the caller's claim, so it is
 * shown as a confirmed link only when the parent's own record agrees: the parent holds an
 * EffectStarted at that step, a peer effect to the callee's host naming the callee's skill,
 * written before the callee was admitted. Anything else (a caller naming someone else's run,
 * a step that called another peer) is still listed, marked unconfirmed, never hidden: what
 * the journal holds is shown, and what it proves is said.
 */
import type { RunLink } from '../../src-shared/ipc/contract';
import type { RunHistory } from './run-history';

export type { RunLink, RunLinks } from '../../src-shared/ipc/contract';

/**
 * The host that held `run` just before seq `seq`: on a team plane a run taken over changes
 * hands (RunAdopted), and a child it started was admitted where it was held then.
 */
export function hostAt(run: RunHistory, seq: number): string {
  let host = run.heldBy?.[0]?.host ?? run.host ?? 'plane';
  for (const held of run.heldBy ?? []) if (held.seq < seq) host = held.host;
  return host;
}

/** The peer a peer host names: `peer:<id>`, or on a team plane `peer:<id>@<instance>`. */
function peerIdOfHost(host: string): string {
  const id = host.slice('peer:'.length);
  const at = id.indexOf('@');
  return at < 0 ? id : id.slice(0, at);
}

/**
 * Whether `parent`'s step `step` is a peer call or an agent call that can have admitted `child`
 * (admitted at `childSeq`, under `child.host`: the host its admission named).
 */
export function confirmsCall(parent: RunHistory, step: number | null, child: { agent: string; host: string }, childSeq: number): boolean {
  if (step === null) return false;
  // A child run an agent tool started (agent-effect.ts): admitted where its parent was held
  // then, and the parent's step is an `agent` effect naming that agent, started before it.
  if (!child.agent.startsWith('skill:') && child.host === hostAt(parent, childSeq)) {
    return (parent.steps.get(step) ?? []).some((attempt) => {
      const request = attempt.started.request as { agent?: unknown } | null;
      return attempt.started.effect === 'agent' && request?.agent === child.agent && attempt.started.seq < childSeq;
    });
  }
  if (!child.host.startsWith('peer:') || !child.agent.startsWith('skill:')) return false;
  const peerId = peerIdOfHost(child.host);
  const skill = child.agent.slice('skill:'.length);
  return (parent.steps.get(step) ?? []).some((attempt) => {
    const request = attempt.started.request as { peer?: unknown; skill?: unknown } | null;
    return attempt.started.effect === 'peer' && request?.peer === peerId && request.skill === skill && attempt.started.seq < childSeq;
  });
}

export function linkOf(history: RunHistory, step: number | null, confirmed: boolean): RunLink {
  return { runId: history.runId, agent: history.agent, host: history.host ?? 'plane', step, confirmed, status: history.status, outcome: history.outcome ?? null };
}
