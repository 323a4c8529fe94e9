import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inclusionProof, leafHash, rootFromLeafHashes, verifyInclusion } from './merkle';
import { MerkleLevels } from './merkle-levels';
import { toHex } from './hex';

const leaves = (n: number) => Array.from({ length: n }, (_, i) => leafHash(createHash('sha256').update(String(i)).digest()));

describe('MerkleLevels', () => {
  it('has the RFC 6962 root and the same audit path as the recursive PATH, for every leaf of every size up to 70', () => {
    for (let n = 1; n <= 70; n++) {
      const hashes = leaves(n);
      const levels = new MerkleLevels(hashes);
      const root = rootFromLeafHashes(hashes);
      expect(toHex(levels.root()!)).toBe(toHex(root));
      for (let i = 0; i < n; i++) {
        const proof = levels.inclusionProof(i);
        expect(proof.map(toHex)).toEqual(inclusionProof(hashes, i, n).map(toHex));
        expect(verifyInclusion(hashes[i]!, i, n, proof, root)).toBe(true);
      }
    }
  });

  it('refuses a leaf outside the tree', () => {
    const levels = new MerkleLevels(leaves(5));
    expect(() => levels.inclusionProof(5)).toThrow(RangeError);
    expect(() => levels.inclusionProof(-1)).toThrow(RangeError);
  });
});
