/**
 * A peer's admission policy: the plane's rules, plus the registry's word on peer callers.
 *
 * - A caller holding the shared secret (`session:*`) is fully trusted, as the MCPv2 protocol
 *   defines it (docs/PEER-PROTOCOL.md, "Security model"): "do you know the string". That stays for
 *   compatibility, and is why the identity mode exists.
 * - A caller presenting a peer credential (`peer:<id>`) may call exactly the skills the plane's
 *   registry lets that peer call on this one, read live, so a grant or a revocation made in
 *   the plane applies to the next call without restarting anything.
 * - A caller presenting a token issuer's delegated token (`delegated:<sub>`, made only by the
 *   MCPv2 door of a peer whose record names that issuer, delegated-tokens.ts) is admitted: the
 *   issuer decided that the plane may act for `sub` at this very peer (docs/SECURITY.md,
 *   "Delegated credentials").
 * - Whatever the plane's own policy file denies stays denied (a deny beats any allow).
 */
import { PolicyEngine, type Policy, type PolicyDecision } from '../runtime/policy';
import type { PeerRegistry } from './peer-registry';
import { DELEGATED_PREFIX } from './delegated-tokens';

export class PeerPolicy extends PolicyEngine {
  constructor(
    base: Policy,
    private readonly registry: PeerRegistry,
    private readonly me: string,
  ) {
    super(base);
  }

  override decide(principal: string, action: string, resource: string): PolicyDecision {
    const base = super.decide(principal, action, resource);
    if (!base.allowed && base.rule !== null) return base; // an explicit deny
    if (action !== 'mcpv2:skill.call' || !resource.startsWith('skill:')) return base;
    const skill = resource.slice('skill:'.length);
    if (principal.startsWith('session:')) return { allowed: true, action, resource, principal, rule: null };
    if (principal.startsWith(DELEGATED_PREFIX)) return { allowed: this.registry.get(this.me)?.tokenIssuer !== undefined, action, resource, principal, rule: null };
    if (principal.startsWith('peer:')) {
      const caller = principal.slice('peer:'.length);
      // `ai` is the provider-native face of `ask`: whoever may ask may use it.
      const allowed = this.registry.mayCall(caller, this.me, skill) || (skill === 'ai' && this.registry.mayCall(caller, this.me, 'ask'));
      return { allowed, action, resource, principal, rule: null };
    }
    return base;
  }
}
