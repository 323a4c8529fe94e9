/**
 * RFC 6962 Merkle trees over the journal: the tree hash a checkpoint signs, the proofs an
 * exported journal carries, and the verifiers that check them offline.
 *
 * Hashing (RFC 6962 section 2.1): a leaf is SHA-256(0x00 || data), an interior node
 * SHA-256(0x01 || left || right), the empty tree SHA-256(""). The distinct prefixes keep a
 * leaf from ever being passed off as an interior node (second-preimage resistance). A tree of
 * n > 1 leaves splits at k, the largest power of two smaller than n, so the left subtree is
 * always perfect and a log only ever grows on its right edge. That is what makes consistency
 * proofs possible and lets MerkleAccumulator keep just one root per set bit of n.
 *
 * Proof generation follows RFC 6962 PATH (2.1.1) and PROOF/SUBPROOF (2.1.2), hashes ordered
 * from the leaf upwards. Verification follows RFC 9162 sections 2.1.3.2 and 2.1.4.2. Both are
 * cross-checked against the transparency-dev/merkle vectors (tests/fixtures/merkle).
 *
 * Verifiers return false, never throw, on anything malformed: an index or size that is not a
 * non-negative safe integer, index >= size, sizes out of order, a hash that is not exactly 32
 * bytes (this is stricter than transparency-dev, which accepts equal-size "roots" of any
 * length), or a proof of the wrong length. A consistency proof needs 0 < oldSize: RFC 6962
 * defines PROOF(m, D[n]) only for 0 < m, and transparency-dev/merkle (PR #236) refuses
 * size1 == 0 in every case, including 0 -> 0; an empty tree is trivially a prefix of every
 * tree, so there is nothing to prove and a verifier that "accepts" it would accept any root.
 * oldSize == newSize > 0 is consistent exactly when the proof is empty and the roots are equal.
 *
 * Sizes and indices are JavaScript numbers, safe integers up to 2^53 - 1; the arithmetic
 * below divides rather than bit-shifts because JS bit operators truncate to 32 bits.
 */
import { createHash, hash as oneShotHash } from 'node:crypto';
import { fromHex, toHex } from './hex';

/** SHA-256 output size: every leaf hash, node hash, root and proof element has this length. */
export const HASH_SIZE = 32;

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** MTH({}) = SHA-256 of the empty string. */
export function emptyRoot(): Uint8Array {
  return new Uint8Array(createHash('sha256').digest());
}

/**
 * SHA-256 of `data` as a 32-character latin1 string (one char per byte), one-shot where Node
 * has `crypto.hash` (20.12 and later; a streaming Hash object otherwise). Verification hashes
 * every record three times (record, leaf, node), and for inputs this small the cost is the
 * call, not the compression: a streaming Hash object costs about 3 µs, `hash` with a 'buffer'
 * output about 2 µs (Node 20 builds that Buffer slowly), `hash` with a string output about
 * 0.7 µs. So digests leave node:crypto as latin1 text and are copied into bytes here.
 */
export const sha256Latin1: (data: Uint8Array | string) => string =
  typeof oneShotHash === 'function' ? (data) => oneShotHash('sha256', data, 'binary') : (data) => createHash('sha256').update(data).digest('binary');

/** SHA-256 of `data` as lowercase hex, one-shot where Node has it (see sha256Latin1). */
export const sha256Hex: (data: Uint8Array | string) => string =
  typeof oneShotHash === 'function' ? (data) => oneShotHash('sha256', data, 'hex') : (data) => createHash('sha256').update(data).digest('hex');

function sha256(bytes: Uint8Array): Uint8Array {
  const text = sha256Latin1(bytes);
  // A plain Uint8Array of its own (never a view on a shared pool), like every other hash here.
  const out = new Uint8Array(HASH_SIZE);
  for (let i = 0; i < HASH_SIZE; i++) out[i] = text.charCodeAt(i);
  return out;
}

// Scratch inputs for leaf and node hashes: hashing copies its input before returning, so one
// buffer per shape serves every call (this module runs on one thread at a time per isolate).
const leafInput = new Uint8Array(1 + HASH_SIZE);
const nodeInput = new Uint8Array(1 + 2 * HASH_SIZE);
leafInput[0] = LEAF_PREFIX[0]!;
nodeInput[0] = NODE_PREFIX[0]!;

/** MTH({d}) = SHA-256(0x00 || d). */
export function leafHash(data: Uint8Array): Uint8Array {
  if (data.length !== HASH_SIZE) {
    const input = new Uint8Array(1 + data.length);
    input[0] = LEAF_PREFIX[0]!;
    input.set(data, 1);
    return sha256(input);
  }
  leafInput.set(data, 1);
  return sha256(leafInput);
}

/** A Buffer over leafInput, for writing a hex hash into it without an intermediate copy. */
const leafInputBytes = Buffer.from(leafInput.buffer, leafInput.byteOffset, leafInput.byteLength);

/**
 * MTH({d}) for d given as 64 hex digits (a record's hash as the journal stores it): the same
 * as leafHash(fromHex(hex)) without the intermediate array. Throws TypeError on anything but
 * exactly 64 hex digits.
 */
export function leafHashOfHex(hex: string): Uint8Array {
  const out = new Uint8Array(HASH_SIZE);
  writeLeafHashOfHex(hex, out, 0);
  return out;
}

/**
 * leafHashOfHex written into `out` at `offset` instead of a new array: what a verify chunk keeps
 * its leaves in (one flat array, not an object per leaf for the garbage collector to copy).
 */
export function writeLeafHashOfHex(hex: string, out: Uint8Array, offset: number): void {
  if (hex.length !== 2 * HASH_SIZE || leafInputBytes.write(hex, 1, 'hex') !== HASH_SIZE) {
    throw new TypeError(`a leaf's data is ${HASH_SIZE} bytes as ${2 * HASH_SIZE} hex digits`);
  }
  const text = sha256Latin1(leafInput);
  for (let i = 0; i < HASH_SIZE; i++) out[offset + i] = text.charCodeAt(i);
}

const nodeInputBytes = Buffer.from(nodeInput.buffer, nodeInput.byteOffset, nodeInput.byteLength);

/**
 * The root of the perfect tree over `width` leaf hashes (a power of two) held one after another
 * in `hashes` from byte `offset`, computed in place: each level overwrites the start of the one
 * below it, so nothing is allocated but the digests. `hashes` is scratch afterwards.
 */
export function perfectRootInPlace(hashes: Buffer, offset: number, width: number): Uint8Array {
  for (let level = width; level > 1; level /= 2) {
    for (let i = 0; i < level / 2; i++) {
      hashes.copy(nodeInputBytes, 1, offset + 2 * i * HASH_SIZE, offset + (2 * i + 2) * HASH_SIZE);
      hashes.write(sha256Latin1(nodeInput), offset + i * HASH_SIZE, HASH_SIZE, 'latin1');
    }
  }
  return new Uint8Array(hashes.subarray(offset, offset + HASH_SIZE));
}

/** SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length !== HASH_SIZE || right.length !== HASH_SIZE) {
    const input = new Uint8Array(1 + left.length + right.length);
    input[0] = NODE_PREFIX[0]!;
    input.set(left, 1);
    input.set(right, 1 + left.length);
    return sha256(input);
  }
  nodeInput.set(left, 1);
  nodeInput.set(right, 1 + HASH_SIZE);
  return sha256(nodeInput);
}

/** MTH(D[n]) computed from the leaves' hashes by RFC 6962's recursive definition. */
export function rootFromLeafHashes(leafHashes: readonly Uint8Array[]): Uint8Array {
  requireHashes(leafHashes, 'leafHashes');
  return leafHashes.length === 0 ? emptyRoot() : subtreeRoot(leafHashes, 0, leafHashes.length);
}

/**
 * PATH(index, D[treeSize]) of RFC 6962 section 2.1.1: the sibling hashes from the leaf up to
 * the root of the tree made of the first treeSize leaves. Requires 0 <= index < treeSize <=
 * leafHashes.length; throws RangeError otherwise (generation has the leaves; a bad request is
 * a bug in the caller, unlike a bad proof, which is data).
 */
export function inclusionProof(leafHashes: readonly Uint8Array[], index: number, treeSize: number): Uint8Array[] {
  requireHashes(leafHashes, 'leafHashes');
  if (!isSize(treeSize) || treeSize < 1 || treeSize > leafHashes.length) {
    throw new RangeError(`treeSize ${treeSize} is not in [1, ${leafHashes.length}]`);
  }
  if (!isSize(index) || index >= treeSize) {
    throw new RangeError(`index ${index} is not in [0, ${treeSize})`);
  }
  const proof: Uint8Array[] = [];
  collectPath(leafHashes, index, 0, treeSize, proof);
  return proof;
}

/**
 * PROOF(oldSize, D[newSize]) of RFC 6962 section 2.1.2: the hashes that show the tree of the
 * first oldSize leaves is a prefix of the tree of the first newSize. Requires 0 < oldSize <=
 * newSize <= leafHashes.length (empty for oldSize == newSize); throws RangeError otherwise.
 */
export function consistencyProof(leafHashes: readonly Uint8Array[], oldSize: number, newSize: number): Uint8Array[] {
  requireHashes(leafHashes, 'leafHashes');
  if (!isSize(newSize) || newSize > leafHashes.length) {
    throw new RangeError(`newSize ${newSize} is not in [0, ${leafHashes.length}]`);
  }
  if (!isSize(oldSize) || oldSize < 1 || oldSize > newSize) {
    throw new RangeError(`oldSize ${oldSize} is not in [1, ${newSize}]: RFC 6962 defines consistency only from a non-empty tree`);
  }
  const proof: Uint8Array[] = [];
  if (oldSize < newSize) collectSubproof(leafHashes, oldSize, 0, newSize, true, proof);
  return proof;
}

/** RFC 9162 section 2.1.3.2: does `proof` place `leafHash` at `index` in the tree with `root`? */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isHash(leafHash) || !isHash(root) || !isHashList(proof)) return false;
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false; // Proof longer than the path.
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      // On the right edge the path skips levels where the node has no right sibling.
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(r, root);
}

/** RFC 9162 section 2.1.4.2: is the tree (oldSize, oldRoot) a prefix of (newSize, newRoot)? */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isHash(oldRoot) || !isHash(newRoot) || !isHashList(proof)) return false;
  if (!isSize(oldSize) || !isSize(newSize) || oldSize === 0 || oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && equalBytes(oldRoot, newRoot);
  if (proof.length === 0) return false;

  // When oldSize is a power of two its root is a node of the new tree, and the proof omits it.
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  const [seed, ...rest] = path as [Uint8Array, ...Uint8Array[]];
  let fr = seed;
  let sr = seed;
  for (const c of rest) {
    if (sn === 0) return false; // Proof longer than the path.
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(fr, oldRoot) && equalBytes(sr, newRoot);
}

/** The persisted form of a MerkleAccumulator: plain JSON, hashes as lowercase hex. */
export interface MerkleAccumulatorState {
  version: 1;
  size: number;
  /** Roots of the perfect subtrees covering [0, size), left to right (largest first). */
  frontier: string[];
}

/** A MerkleAccumulatorState that does not describe any tree. */
export class MerkleStateError extends Error {
  override readonly name = 'MerkleStateError';
}

/**
 * The tree of everything appended so far, kept as its compact range ("frontier"): one
 * perfect-subtree root per set bit of size, at most ceil(log2(size + 1)) hashes. Appending
 * merges equal-height roots like a binary counter carries, so each append costs O(1)
 * amortised hashes and the journal can persist the frontier and resume without rehashing
 * every record. root() folds the frontier right to left, which is exactly RFC 6962's
 * recursive split, so it equals rootFromLeafHashes of the same leaves for every size.
 *
 * A deserialized frontier is trusted as given; the journal checks it by comparing root()
 * with its last signed checkpoint before appending to it.
 */
export class MerkleAccumulator {
  #size = 0;
  #frontier: Uint8Array[] = [];

  get size(): number {
    return this.#size;
  }

  append(leafHash: Uint8Array): void {
    if (!isHash(leafHash)) throw new TypeError(`a leaf hash is ${HASH_SIZE} bytes`);
    if (this.#size >= Number.MAX_SAFE_INTEGER) throw new RangeError('the tree is full');
    let hash: Uint8Array = new Uint8Array(leafHash);
    // Each trailing 1 bit of the old size is a subtree of the height being carried.
    for (let carry = this.#size; isOdd(carry); carry = half(carry)) {
      hash = nodeHash(this.#frontier.pop() as Uint8Array, hash);
    }
    this.#frontier.push(hash);
    this.#size += 1;
  }

  /**
   * Appends a perfect subtree of 2^height leaves whose root is `root`, as appending its leaves
   * one by one would: the tree's size must be a multiple of 2^height (the subtree is aligned),
   * so every frontier entry is at least that tall and the carry starts at its level. RFC 6962
   * trees compose this way, which lets workers hash aligned ranges of leaves and the caller
   * fold only their roots (verify-chunks.ts).
   */
  appendSubtree(root: Uint8Array, height: number): void {
    if (!isHash(root)) throw new TypeError(`a subtree root is ${HASH_SIZE} bytes`);
    if (!Number.isSafeInteger(height) || height < 0 || height > 52) throw new RangeError(`height ${height} is not in [0, 52]`);
    const width = 2 ** height;
    if (this.#size % width !== 0) throw new RangeError(`a subtree of ${width} leaves is not aligned at size ${this.#size}`);
    if (this.#size + width > Number.MAX_SAFE_INTEGER) throw new RangeError('the tree is full');
    let hash: Uint8Array = new Uint8Array(root);
    for (let carry = this.#size / width; isOdd(carry); carry = half(carry)) {
      hash = nodeHash(this.#frontier.pop() as Uint8Array, hash);
    }
    this.#frontier.push(hash);
    this.#size += width;
  }

  root(): Uint8Array {
    const last = this.#frontier.length - 1;
    if (last < 0) return emptyRoot();
    let hash: Uint8Array = new Uint8Array(this.#frontier[last] as Uint8Array);
    for (let i = last - 1; i >= 0; i--) hash = nodeHash(this.#frontier[i] as Uint8Array, hash);
    return hash;
  }

  /** Copies of the frontier hashes, left to right. */
  frontier(): Uint8Array[] {
    return this.#frontier.map((hash) => new Uint8Array(hash));
  }

  serialize(): MerkleAccumulatorState {
    return { version: 1, size: this.#size, frontier: this.#frontier.map(toHex) };
  }

  static deserialize(state: unknown): MerkleAccumulator {
    if (typeof state !== 'object' || state === null) throw new MerkleStateError('state is not an object');
    const { version, size, frontier } = state as Partial<Record<keyof MerkleAccumulatorState, unknown>>;
    if (version !== 1) throw new MerkleStateError(`unknown state version ${String(version)}`);
    if (!isSize(size)) throw new MerkleStateError(`size ${String(size)} is not a non-negative safe integer`);
    if (!Array.isArray(frontier) || frontier.length !== bitCount(size)) {
      throw new MerkleStateError(`a tree of size ${size} has a frontier of ${bitCount(size)} hashes`);
    }
    const hashes = frontier.map((text: unknown, position) => {
      if (typeof text !== 'string' || !/^[0-9a-f]{64}$/.test(text)) {
        throw new MerkleStateError(`frontier[${position}] is not 64 lowercase hex digits`);
      }
      return fromHex(text);
    });
    const accumulator = new MerkleAccumulator();
    accumulator.#size = size;
    accumulator.#frontier = hashes;
    return accumulator;
  }
}

function subtreeRoot(leafHashes: readonly Uint8Array[], start: number, end: number): Uint8Array {
  // A copy, so no proof or root ever aliases (and lets a caller mutate) the caller's leaves.
  if (end - start === 1) return new Uint8Array(leafHashes[start] as Uint8Array);
  const split = start + largestPowerOfTwoBelow(end - start);
  return nodeHash(subtreeRoot(leafHashes, start, split), subtreeRoot(leafHashes, split, end));
}

/** PATH(m, D[start:end]), appended to `out` leaf first. */
function collectPath(leafHashes: readonly Uint8Array[], index: number, start: number, end: number, out: Uint8Array[]): void {
  if (end - start === 1) return;
  const split = start + largestPowerOfTwoBelow(end - start);
  if (index < split) {
    collectPath(leafHashes, index, start, split, out);
    out.push(subtreeRoot(leafHashes, split, end));
  } else {
    collectPath(leafHashes, index, split, end, out);
    out.push(subtreeRoot(leafHashes, start, split));
  }
}

/** SUBPROOF(m, D[start:end], b), where m counts the old tree's leaves inside [start, end). */
function collectSubproof(
  leafHashes: readonly Uint8Array[],
  m: number,
  start: number,
  end: number,
  haveRoot: boolean,
  out: Uint8Array[],
): void {
  if (m === end - start) {
    // The verifier knows the old root itself; any other complete old subtree it must be given.
    if (!haveRoot) out.push(subtreeRoot(leafHashes, start, end));
    return;
  }
  const k = largestPowerOfTwoBelow(end - start);
  if (m <= k) {
    collectSubproof(leafHashes, m, start, start + k, haveRoot, out);
    out.push(subtreeRoot(leafHashes, start + k, end));
  } else {
    collectSubproof(leafHashes, m - k, start + k, end, false, out);
    out.push(subtreeRoot(leafHashes, start, start + k));
  }
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return largestPowerOfTwoBelow(n) * 2 === n || n === 1;
}

function bitCount(n: number): number {
  let count = 0;
  for (let rest = n; rest > 0; rest = half(rest)) count += rest % 2;
  return count;
}

function isOdd(n: number): boolean {
  return n % 2 === 1;
}

function half(n: number): number {
  return Math.floor(n / 2);
}

function isSize(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_SIZE;
}

function isHashList(value: unknown): value is readonly Uint8Array[] {
  return Array.isArray(value) && value.every(isHash);
}

function requireHashes(hashes: readonly Uint8Array[], name: string): void {
  if (!isHashList(hashes)) throw new TypeError(`${name} must be ${HASH_SIZE}-byte hashes`);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
