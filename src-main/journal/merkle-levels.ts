/**
 * Every level of an RFC 6962 tree, built once, so that many inclusion proofs over the same
 * tree cost O(log n) each (exporting a run of a large journal asks for one per record). Built
 * bottom-up with the last node of an odd level promoted unchanged, which yields exactly the
 * left-balanced tree RFC 6962's recursive split defines; merkle-levels.test.ts holds the proofs
 * equal to merkle.ts's recursive PATH for every index of every size up to a bound.
 */
import { nodeHash } from './merkle';

export class MerkleLevels {
  private readonly levels: Uint8Array[][];

  constructor(leafHashes: readonly Uint8Array[]) {
    const levels: Uint8Array[][] = [leafHashes.slice()];
    while (levels[levels.length - 1]!.length > 1) {
      const below = levels[levels.length - 1]!;
      const above: Uint8Array[] = [];
      for (let i = 0; i < below.length; i += 2) {
        const right = below[i + 1];
        above.push(right ? nodeHash(below[i]!, right) : below[i]!);
      }
      levels.push(above);
    }
    this.levels = levels;
  }

  get size(): number {
    return this.levels[0]!.length;
  }

  root(): Uint8Array | undefined {
    return this.levels[this.levels.length - 1]![0];
  }

  /** The audit path for leaf `index` in the whole tree, leaf level first. */
  inclusionProof(index: number): Uint8Array[] {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.size) throw new RangeError(`leaf ${index} is not in a tree of ${this.size}`);
    const proof: Uint8Array[] = [];
    let m = index;
    for (let level = 0; level < this.levels.length - 1; level++) {
      const nodes = this.levels[level]!;
      const sibling = m ^ 1;
      if (sibling < nodes.length) proof.push(nodes[sibling]!);
      m >>= 1;
    }
    return proof;
  }
}
