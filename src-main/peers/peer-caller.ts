/**
 * The plane's hands on a peer for a run (runtime's `PeerCaller`): the registry says who the
 * peer is and whether it is revoked, the supervisor where it listens now; the credential is
 * the plane's own (a session minted with the peer's shared secret, bound to this machine's
 * address), or, for a peer that trusts a token issuer, a delegated token exchanged for the
 * run's owner (token-exchange.ts); either is held as a PeerCredential for that peer alone and
 * presented only in the Authorization header.
 *
 * What a failed call means for the world is decided here, from what the wire said, because
 * only this layer knows the wire. Only a failure before the request left (or a refusal the
 * peer made before running anything) is DidNotHappen, safe to retry. Once the request has
 * left, silence is not evidence of absence: a timeout, a reset mid-answer or a 5xx is InDoubt
 * and goes to a person through the recovery queue. A skill that ran and failed Landed:
 * whatever it did is done.
 */
import { formatPeerAddress, Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import type { Disposition } from '../../src-shared/vocabulary/effects';
import type { FailureCode } from '../../src-shared/vocabulary/failures';
import type { PeerCaller } from '../runtime/peer-effect';
import { EffectFailure } from '../runtime/run-signals';
import { PeerCredential } from './peer-credential';
import { Mcpv2Client, PeerClientError, type PeerFailureStage } from './peer-client';
import type { PeerRecord, PeerRegistry } from './peer-registry';
import { audienceOf } from './peer-credentials';
import { mintSession } from './session-token';
import { TokenExchangeError, TokenExchanger } from './token-exchange';
import { loadOrCreatePlaneKey } from '../journal/plane-key';
import type { Netguard } from '../net/netguard';

export type PeerCallerDeps = {
  registry: PeerRegistry;
  /** Where a running peer listens now (the supervisor knows; a stopped peer has none). */
  portOf(peerId: string): number | null;
  /** How long a call may wait for the peer's answer (headers, then each part of the body). */
  timeoutMs?: number;
} & (
  | {
      /**
       * What token issuers are reached through (the plane's netguard), for the default exchanger:
       * the data dir's issuers and plane key.
       */
      netguard: Netguard;
    }
  | {
      /** Where delegated credentials come from (token-exchange.ts), made by the caller. */
      exchanger: TokenExchanger;
    }
);

/**
 * JSON-RPC errors a peer sends when it refused a call before running it: a malformed or
 * unknown call, bad arguments, a session or capability refusal, a rate limit, a version or
 * provider it does not serve. Any other error came from running the skill, which may have
 * done part of its work.
 */
const REFUSED_BEFORE_RUNNING = new Set<number>([
  Mcpv2Error.ParseError,
  Mcpv2Error.InvalidRequest,
  Mcpv2Error.MethodNotFound,
  Mcpv2Error.InvalidParams,
  Mcpv2Error.InvalidSession,
  Mcpv2Error.SkillNotFound,
  Mcpv2Error.RateLimited,
  Mcpv2Error.ProtocolVersionMismatch,
  Mcpv2Error.CapabilityViolation,
  Mcpv2Error.UnsupportedProvider,
]);

/** What a failed hop means for the world (see the module comment). */
export function dispositionOf(error: PeerClientError): Disposition {
  switch (error.stage) {
    case 'address':
    case 'unreachable':
    case 'session':
    case 'refused':
      return 'DidNotHappen';
    case 'no-answer':
      return 'InDoubt';
    case 'call':
      return error.code !== null && REFUSED_BEFORE_RUNNING.has(error.code) ? 'DidNotHappen' : 'Landed';
  }
}

/** The failure code of each stage a hop can fail at (`no-answer` is PeerNoAnswer). */
const STAGE_FAILURE: { readonly [S in PeerFailureStage]: FailureCode } = {
  address: 'PeerAddress',
  unreachable: 'PeerUnreachable',
  session: 'PeerSession',
  refused: 'PeerRefused',
  'no-answer': 'PeerNoAnswer',
  call: 'PeerCall',
};

/** What a failed token exchange is called; either way nothing was sent to the peer. */
function exchangeFailure(error: TokenExchangeError): EffectFailure {
  return new EffectFailure(error.stage === 'refused' ? 'TokenExchangeRefused' : 'TokenIssuerUnavailable', error.message, 'DidNotHappen');
}

export function createPeerCaller(deps: PeerCallerDeps): PeerCaller {
  const dataDir = deps.registry.dataDir;
  const exchanger = 'exchanger' in deps ? deps.exchanger : new TokenExchanger({ dataDir, netguard: deps.netguard, signingKey: () => loadOrCreatePlaneKey(dataDir) });

  /**
   * The credential for this hop: a peer that trusts a token issuer gets a token exchanged for
   * the run's owner (and only that: it refuses the plane's own); any other, the plane's session.
   */
  async function credentialFor(peerId: string, record: PeerRecord, principal: string): Promise<PeerCredential> {
    const audience = audienceOf(peerId);
    if (record.tokenIssuer) {
      const trust = record.tokenIssuer;
      try {
        return await exchanger.tokenFor({ issuer: trust.name, subject: principal, audience, ...(trust.resource ? { resource: trust.resource } : {}) });
      } catch (error) {
        if (error instanceof TokenExchangeError) throw exchangeFailure(error);
        // Anything else (the plane key unreadable, a secret file that will not open) also came
        // before a byte went to the peer: it did not happen there.
        throw new EffectFailure('TokenIssuerUnavailable', `no delegated credential for ${peerId}: ${error instanceof Error ? error.message.slice(0, 200) : 'the exchange failed'}`, 'DidNotHappen');
      }
    }
    if (record.auth === 'identity') throw new EffectFailure('PeerAuth', `peer ${peerId} accepts peer credentials only; the plane calls with a session`, 'DidNotHappen');
    const session = mintSession({ secret: deps.registry.secretOf(peerId), clientIp: '127.0.0.1', ttlSeconds: 120 });
    return new PeerCredential(audience, session.sessionId, 'plane', session.expiresAt);
  }

  return {
    destinationOf(peerId) {
      const record = deps.registry.get(peerId);
      return record ? formatPeerAddress(record.publicIp, deps.portOf(peerId) ?? record.port) : `peer:${peerId}`;
    },
    credentialOf(peerId, principal) {
      const trust = deps.registry.get(peerId)?.tokenIssuer;
      return trust ? { kind: 'delegated', audience: audienceOf(peerId), principal, issuer: trust.name } : { kind: 'plane', audience: audienceOf(peerId) };
    },
    async call(peerId, skill, args, caller, hop) {
      const record = deps.registry.get(peerId);
      const port = deps.portOf(peerId);
      if (!record) throw new EffectFailure('UnknownPeer', `no peer named ${peerId} in this plane's registry`, 'DidNotHappen');
      if (record.revoked) throw new EffectFailure('PeerRevoked', `peer ${peerId} is revoked`, 'DidNotHappen');
      if (port === null) throw new EffectFailure('PeerStopped', `peer ${peerId} is not running; start it and retry`, 'DidNotHappen');
      const credential = await credentialFor(peerId, record, hop.principal);
      // The last word before the request leaves: a halt that came while the credential was
      // being obtained (an exchange can take seconds) stops the call here.
      hop.beforeDispatch();
      const client = new Mcpv2Client({ host: record.publicIp, port, sessionId: null }, deps.timeoutMs);
      try {
        const result = await client.callTool(skill, args, { auth: { credential, audience: audienceOf(peerId) } }, { caller: { runId: caller.runId, step: caller.step } });
        return { result, provenance: `peer:${peerId}` };
      } catch (error) {
        if (error instanceof PeerClientError) throw new EffectFailure(STAGE_FAILURE[error.stage], error.message, dispositionOf(error));
        throw error;
      }
    },
  };
}
