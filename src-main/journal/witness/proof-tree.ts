/**
 * The journal's Merkle tree kept level by level as it grows, for the consistency proofs a
 * witness asks for (docs/WITNESS.md). Level k holds the root of every complete, aligned subtree
 * of 2^k leaves, so the root of any range RFC 6962's recursion visits is O(log n) lookups and
 * one proof O(log² n) hashes: computed from the leaves each time (merkle.ts consistencyProof),
 * a proof over 100k records hashed every leaf again, on the thread that appends. Appending a
 * leaf costs one hash amortised. proof-tree.test.ts holds its proofs equal to merkle.ts's.
 */
import { nodeHash } from '../merkle';

export class ProofTree {
  private readonly levels: Uint8Array[][] = [[]];

  get size(): number {
    return this.levels[0]!.length;
  }

  append(leafHash: Uint8Array): void {
    this.levels[0]!.push(leafHash);
    for (let k = 0; this.levels[k]!.length % 2 === 0; k++) {
      const level = this.levels[k]!;
      const above = (this.levels[k + 1] ??= []);
      above.push(nodeHash(level[level.length - 2]!, level[level.length - 1]!));
    }
  }

  /** MTH(D[start:end]) where start is aligned to the largest power of two below end - start (as RFC 6962's splits are). */
  private root(start: number, end: number): Uint8Array {
    const width = end - start;
    const level = Math.log2(width);
    if (Number.isInteger(level) && start % width === 0) return this.levels[level]![start / width]!;
    const k = largestPowerOfTwoBelow(width);
    return nodeHash(this.root(start, start + k), this.root(start + k, end));
  }

  /** PROOF(oldSize, D[newSize]) of RFC 6962 section 2.1.2; requires 0 < oldSize <= newSize <= size. */
  consistencyProof(oldSize: number, newSize: number): Uint8Array[] {
    if (!(oldSize > 0 && oldSize <= newSize && newSize <= this.size)) throw new RangeError(`no consistency proof from ${oldSize} to ${newSize} in a tree of ${this.size}`);
    const out: Uint8Array[] = [];
    if (oldSize < newSize) this.subproof(oldSize, 0, newSize, true, out);
    return out;
  }

  private subproof(m: number, start: number, end: number, haveRoot: boolean, out: Uint8Array[]): void {
    if (m === end - start) {
      if (!haveRoot) out.push(this.root(start, end));
      return;
    }
    const k = largestPowerOfTwoBelow(end - start);
    if (m <= k) {
      this.subproof(m, start, start + k, haveRoot, out);
      out.push(this.root(start + k, end));
    } else {
      this.subproof(m - k, start + k, end, false, out);
      out.push(this.root(start, start + k));
    }
  }
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}
