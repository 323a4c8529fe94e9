/**
 * A run calling a local peer's skill: `cx.callPeer`, a governed effect like any other.
 *
 * The hop extends the run's delegation chain by one link naming the peer and is checked here,
 * before dispatch: depth (a chain with no room for another link refuses at the hand-off) and
 * the run's grant (peer and skill). Everything about reaching the peer (the registry, whether
 * it runs, the credential, the wire and what a failure on it means) is behind `PeerCaller`, an
 * interface this layer owns and the peers layer implements (peers/peer-caller.ts): the runtime
 * never imports a peer module. The peer receives a credential, not the chain: a chain read
 * from a message body would be the sender's claim about its own authority. EffectStarted
 * records the credential's kind and audience (and, for a delegated one, whom it acts for and
 * its issuer), never the token; the credential is obtained when the call is performed, never on
 * replay. Halts are checked between steps and once more at the hop itself, after the
 * credential is in hand and right before the request leaves (`beforeDispatch`): a subject
 * halted while a token exchange was in flight never reaches the peer, and the run waits on the
 * halt as it would between steps (run-context.ts, `hop`; the MCP and A2A effects check the same
 * way). The call names the run and step that made it (`context.caller`), so the peer's skill run records its parent and the journal links the two
 * runs both ways (run-links.ts). What comes back is labelled `peer:<id>`:
 * untrusted.
 */
import type { z } from 'zod';
import type { CredentialUseSchema } from '../../src-shared/journal/records';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import type { Traced } from '../../src-shared/vocabulary/provenance';
import type { EffectAt, OutsideHop, RunContext } from './run-context';
import { EffectFailure } from './run-signals';
import { DelegationError, extendChain } from './policy';

/** How runs reach local peers. Implemented in peers/, wired in plane/. */
export interface PeerCaller {
  /** Where a call to this peer goes now, for the effect's key (its address, or `peer:<id>`). */
  destinationOf(peerId: string): string;
  /** Which credential a call to this peer for `principal` will present (kind, audience, issuer: never the token). */
  credentialOf(peerId: string, principal: string): z.infer<typeof CredentialUseSchema>;
  /**
   * Performs one skill call. A failure is an `EffectFailure` whose disposition says whether
   * the call can have happened (see peers/peer-caller.ts for the rules).
   */
  call(peerId: string, skill: string, args: Record<string, unknown>, caller: EffectAt, hop: PeerHop): Promise<{ result: unknown; provenance: string }>;
}

/**
 * What the runtime tells the peer caller about the hop it performs: `beforeDispatch` is called
 * once the credential is in hand, immediately before the request leaves (OutsideHop).
 */
export interface PeerHop extends OutsideHop {
  /** Whom the call acts for: the run's owner (a delegated credential names them). */
  principal: string;
}

/**
 * `sinks`: where the call's `target` (the peer and skill) and `arguments` came from, for a peer
 * grant that protects them (sink-check.ts): a step's target is the manifest's own, a model's
 * tool call's is the model's choice.
 */
export async function callPeer(cx: RunContext, peers: PeerCaller, peerId: string, skill: string, args: Record<string, unknown>, sinks?: { target: Traced; arguments: Traced }): Promise<unknown> {
  return cx.effect({
    ...(sinks ? { sinks } : {}),
    effect: 'peer',
    name: `${peerId}/${skill}`,
    request: { peer: peerId, skill, arguments: args },
    destination: peers.destinationOf(peerId),
    grant: `peer:${peerId}`,
    credential: peers.credentialOf(peerId, cx.owner),
    estimate: { ...NO_SPEND, effects: 1 },
    async perform(at) {
      try {
        extendChain(cx.actingAs(), `peer:${peerId}`);
      } catch (error) {
        if (error instanceof DelegationError) throw new EffectFailure('DelegationRefused', error.message, 'DidNotHappen');
        throw error;
      }
      const { result, provenance } = await peers.call(peerId, skill, args, at, { ...cx.hop(), principal: cx.owner });
      return { result, spend: { ...NO_SPEND, effects: 1 }, provenance };
    },
  });
}
