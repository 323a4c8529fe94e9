/**
 * Policy: rules that allow or deny an action on a resource for a principal. What is not
 * allowed is denied; a deny rule beats any allow. Actions are namespaced verbs
 * (`runtime:run.start`, `mcpv2:skill.call`), resources typed names (`agent:summarize`,
 * `skill:ask`), principals `user:<id>`, `peer:<id>`, `plane`. Patterns take `*` for any run of
 * characters.
 *
 * A denial is journaled (AdmissionRefused names the action and resource, for the operator)
 * and answered to the caller with a fixed sentence: naming the rule's action and resource to
 * the caller would let a prober map this plane's authorization vocabulary.
 *
 * `authority` declares the most a principal may ever hold, as grant names (`model:local`,
 * `tool:file.write`, `peer:reviewer/ask`). A rule that lets such a principal start an agent
 * whose grants exceed that authority is refused when the plane is built: clipping would
 * silently absorb a misconfiguration worth seeing.
 */
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';

export const PolicyRuleSchema = z
  .object({
    effect: z.enum(['allow', 'deny']),
    principal: z.string().min(1),
    action: z.string().min(1),
    resource: z.string().min(1),
  })
  .strict();

export const PolicySchema = z
  .object({
    rules: z.array(PolicyRuleSchema),
    authority: z.record(z.string(), z.array(z.string())).default({}),
  })
  .strict();
export type Policy = z.infer<typeof PolicySchema>;

export interface PolicyDecision {
  allowed: boolean;
  action: string;
  resource: string;
  principal: string;
  /** Index of the deciding rule; null when nothing matched (default deny). */
  rule: number | null;
}

function globToRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

export class PolicyEngine {
  private readonly compiled: Array<{ effect: 'allow' | 'deny'; principal: RegExp; action: RegExp; resource: RegExp }>;

  constructor(readonly policy: Policy) {
    this.compiled = policy.rules.map((r) => ({
      effect: r.effect,
      principal: globToRegExp(r.principal),
      action: globToRegExp(r.action),
      resource: globToRegExp(r.resource),
    }));
  }

  static parse(raw: unknown, source: string): PolicyEngine {
    const parsed = PolicySchema.safeParse(raw);
    if (!parsed.success) throw new Error(`${source}: ${describeZodError(parsed.error)}`);
    return new PolicyEngine(parsed.data);
  }

  /** Overridable: a peer's policy consults the live peer registry too (see peers/peer-policy.ts). */
  decide(principal: string, action: string, resource: string): PolicyDecision {
    let allowedBy: number | null = null;
    for (let i = 0; i < this.compiled.length; i++) {
      const rule = this.compiled[i]!;
      if (!rule.principal.test(principal) || !rule.action.test(action) || !rule.resource.test(resource)) continue;
      if (rule.effect === 'deny') return { allowed: false, action, resource, principal, rule: i };
      allowedBy ??= i;
    }
    return { allowed: allowedBy !== null, action, resource, principal, rule: allowedBy };
  }

  /** Principals with a declared authority whose allow rules could start `agent` (exact, not pattern, principals). */
  principalsAllowedToStart(agent: string): string[] {
    return Object.keys(this.policy.authority).filter((principal) => this.decide(principal, 'runtime:run.start', `agent:${agent}`).allowed);
  }
}

/** Delegation: who acts for whom, root first. Each hop adds a link; the depth is capped. */
export const MAX_CHAIN_DEPTH = 4;

export class DelegationError extends Error {
  override readonly name = 'DelegationError';
}

export function extendChain(chain: readonly string[], link: string, maxDepth = MAX_CHAIN_DEPTH): string[] {
  if (chain.length === 0) throw new DelegationError('a run acting for nobody cannot delegate');
  if (chain.length >= maxDepth) throw new DelegationError(`the delegation chain ${chain.join(' → ')} has no room for ${link} (depth cap ${maxDepth})`);
  return [...chain, link];
}

/** The grants in `wanted` that `authority` does not cover (exact names or `kind:*` patterns). */
export function grantsBeyond(authority: readonly string[], wanted: readonly string[]): string[] {
  const patterns = authority.map(globToRegExp);
  return wanted.filter((grant) => !patterns.some((p) => p.test(grant)));
}
