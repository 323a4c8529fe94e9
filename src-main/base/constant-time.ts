/**
 * Secret comparison in constant time. Both sides are hashed first so the comparison takes the
 * same time whatever the lengths: `timingSafeEqual` itself throws on unequal lengths, and
 * branching on length would tell a prober how long the token is.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
