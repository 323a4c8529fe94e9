/** ProofTree's consistency proofs are merkle.ts's, for every pair of sizes up to a bound, and verify. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consistencyProof, leafHash, rootFromLeafHashes, verifyConsistency } from '../merkle';
import { ProofTree } from './proof-tree';

describe('ProofTree', () => {
  it("gives merkle.ts's consistency proof for every 0 < m <= n <= 70", () => {
    const leaves = Array.from({ length: 70 }, () => leafHash(randomBytes(32)));
    const tree = new ProofTree();
    for (const leaf of leaves) tree.append(leaf);
    for (let n = 1; n <= 70; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = tree.consistencyProof(m, n);
        expect(proof.map((h) => Buffer.from(h).toString('hex'))).toEqual(consistencyProof(leaves, m, n).map((h) => Buffer.from(h).toString('hex')));
        expect(verifyConsistency(m, n, rootFromLeafHashes(leaves.slice(0, m)), rootFromLeafHashes(leaves.slice(0, n)), proof)).toBe(true);
      }
    }
    expect(() => tree.consistencyProof(0, 5)).toThrow(RangeError);
    expect(() => tree.consistencyProof(5, 71)).toThrow(RangeError);
  });
});
