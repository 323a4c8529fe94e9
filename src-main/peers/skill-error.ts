/**
 * The failure a skill throws to answer with an MCPv2 error code (skills.ts says how it travels:
 * the run seals failed with `mcpv2:<code>`, the peer answers the slot with that code). Its own
 * file so that custom-skills.ts, which skills.ts runs, can throw it without importing skills.ts.
 */
import type { Mcpv2ErrorCode } from '../../src-shared/protocol/mcpv2';
import { EffectFailure } from '../runtime/run-signals';

export function skillError(code: Mcpv2ErrorCode, message: string): EffectFailure {
  return new EffectFailure(`mcpv2:${code}`, message, 'DidNotHappen');
}
