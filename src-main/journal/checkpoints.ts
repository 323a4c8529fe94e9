/**
 * Signed checkpoints: (journal id, tree size, Merkle root, time) signed with the plane's
 * Ed25519 key as a compact JWS, appended one per line to checkpoints/checkpoints.jsonl in the
 * data dir, outside the database.
 *
 * Why: a hash chain alone cannot detect a truncated tail (drop the last records and the rest
 * still links) or a rewritten suffix (change a record and recompute every later hash). A
 * signature over the Merkle root of the first N records pins all N: a verifier recomputes the
 * root from the records and compares. Issued every `every` records, on shutdown and on export.
 *
 * The verifier takes the algorithm from a constant, never from the JWS header: reading `alg`
 * from the document being checked is the oldest JWS attack.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import { HashHexSchema } from '../../src-shared/journal/records';
import type { PlaneKey } from './plane-key';
import { appendPrivateFile } from '../base/private-files';

export const CHECKPOINT_FORMAT = 'agentplane-checkpoint/1';
const ALGORITHM = 'EdDSA';

export const CheckpointSchema = z.object({
  format: z.literal(CHECKPOINT_FORMAT),
  journalId: z.string(),
  treeSize: z.number().int().nonnegative(),
  rootHash: HashHexSchema,
  time: z.string(),
  keyId: z.string(),
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;

export interface SignedCheckpoint {
  checkpoint: Checkpoint;
  jws: string;
}

/**
 * Signs a checkpoint as a compact JWS (RFC 7515), synchronously with node:crypto's Ed25519:
 * BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(Ed25519(signing input)). Synchronous
 * on purpose: an asynchronous signer resolves on a later turn of the event loop, and a writer
 * appending in a tight loop (whose SQLite commits answer synchronously) would starve it, so
 * checkpoints that were due were never written. A standard JWS verifier (jose) accepts what it
 * writes, which checkpoints.test.ts checks, and which keeps this hand-built form honest.
 */
export function signCheckpoint(key: PlaneKey, fields: Omit<Checkpoint, 'format' | 'keyId'>): SignedCheckpoint {
  const checkpoint: Checkpoint = { format: CHECKPOINT_FORMAT, keyId: key.keyId, ...fields };
  const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: key.keyId, typ: 'agentplane-checkpoint+jws' })).toString('base64url');
  const payload = Buffer.from(canonicalize(checkpoint), 'utf8').toString('base64url');
  const signingInput = `${header}.${payload}`;
  const signature = sign(null, Buffer.from(signingInput, 'ascii'), key.privateKey).toString('base64url');
  return { checkpoint, jws: `${signingInput}.${signature}` };
}

export type CheckpointCheck = { ok: true; checkpoint: Checkpoint } | { ok: false; reason: string };

const NOT_VERIFIED = "its signature does not verify with the plane's public key (signed by another key, or altered)";
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** An Ed25519 signature's length in bytes. */
const SIGNATURE_BYTES = 64;
/** Checkpoint signatures checked at once on the thread pool (4 threads by default): enough to keep it busy. */
const CHECKS_IN_FLIGHT = 16;

/**
 * Verifies the signature with `publicKey` and parses the payload. Never throws.
 *
 * A compact JWS verified with node:crypto's Ed25519 directly, for the one form signCheckpoint
 * writes: three base64url parts, a protected header that is a JSON object naming `alg` EdDSA
 * (taken from this constant, never from the header) with no `crit` or `b64` (nothing here
 * understands an extension, so a header asking for one is refused), a 64-byte signature over
 * the ASCII of `header.payload`, checked with an Ed25519 key. Through jose's generic verifier
 * each checkpoint cost 0.13-0.9 ms, about 85 µs this way; a journal holds one per thousand
 * records, and every verification checks them all before any record (bench journal-verify).
 * checkpoints.test.ts holds it to jose's answers over good and forged checkpoints.
 */
export async function verifyCheckpoint(jws: string, publicKey: KeyObject): Promise<CheckpointCheck> {
  const parts = signedParts(jws, publicKey);
  if ('reason' in parts) return { ok: false, reason: parts.reason };
  // The callback form runs on libuv's thread pool: a start-up scan checks one checkpoint per
  // thousand records, 10,000 at 10M records, about a second of Ed25519 that held the main
  // thread (and the plane's listeners, and serve's URL line) when checked in line.
  const verified = await new Promise<boolean>((resolve) => {
    try {
      verify(null, parts.signed, publicKey, parts.signature, (error, ok) => resolve(error === null && ok));
    } catch {
      resolve(false);
    }
  });
  if (!verified) return { ok: false, reason: NOT_VERIFIED };
  return payloadOf(parts.payloadPart);
}

/** The JWS's signed bytes and signature, or why it is not one signCheckpoint could have written. */
function signedParts(jws: string, publicKey: KeyObject): { signed: Buffer; signature: Buffer; payloadPart: string } | { reason: string } {
  const parts = jws.split('.');
  if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part)) || publicKey.asymmetricKeyType !== 'ed25519') return { reason: NOT_VERIFIED };
  const [header, payloadPart, signaturePart] = parts as [string, string, string];
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    return { reason: NOT_VERIFIED };
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return { reason: NOT_VERIFIED };
  const named = claims as Record<string, unknown>;
  if (named.alg !== ALGORITHM || Object.hasOwn(named, 'crit') || Object.hasOwn(named, 'b64')) return { reason: NOT_VERIFIED };
  const signature = Buffer.from(signaturePart, 'base64url');
  // The signature in canonical base64url only (the pattern above leaves the decoder nothing to
  // skip, and this refuses a form with stray trailing bits): one checkpoint, one spelling.
  if (signature.length !== SIGNATURE_BYTES || signature.toString('base64url') !== signaturePart) return { reason: NOT_VERIFIED };
  return { signed: Buffer.from(`${header}.${payloadPart}`, 'ascii'), signature, payloadPart };
}

/** A verified checkpoint's payload, parsed and checked. */
function payloadOf(payloadPart: string): CheckpointCheck {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(Buffer.from(payloadPart, 'base64url')));
  } catch {
    return { ok: false, reason: 'its payload is not JSON' };
  }
  const parsed = CheckpointSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: 'its payload is not an AgentPlane checkpoint' };
  return { ok: true, checkpoint: parsed.data };
}

/**
 * Many checkpoints verified at once, at most `inFlight` at a time on the thread pool, answered
 * in the order given (the first failure in that order is the one a verifier reports).
 */
export async function verifyCheckpointsAll(jwss: readonly string[], publicKeyOf: (at: number) => KeyObject | null, inFlight = CHECKS_IN_FLIGHT): Promise<CheckpointCheck[]> {
  const out = new Array<CheckpointCheck>(jwss.length);
  let next = 0;
  const lane = async () => {
    while (next < jwss.length) {
      const at = next++;
      const key = publicKeyOf(at);
      out[at] = key === null ? { ok: false, reason: NOT_VERIFIED } : await verifyCheckpoint(jwss[at]!, key);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, jwss.length) }, lane));
  return out;
}

/** Reads the payload without verifying (to order and select checkpoints before checking them). */
export function peekCheckpoint(jws: string): Checkpoint | null {
  const part = jws.split('.')[1];
  if (!part) return null;
  try {
    const parsed = CheckpointSchema.safeParse(JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The append-only checkpoint log in the data dir. Several processes may append to it. */
export class CheckpointLog {
  readonly file: string;
  /** Told of each checkpoint this process appends (a witness submitter, docs/WITNESS.md); never awaited. */
  private readonly appended = new Set<(signed: SignedCheckpoint) => void>();

  constructor(dataDir: string) {
    const dir = join(dataDir, 'checkpoints');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, 'checkpoints.jsonl');
  }

  append(signed: SignedCheckpoint): void {
    // One write of one short line with O_APPEND: lines from several processes never interleave.
    // A line torn by a crash has no newline; starting with one keeps the new line whole.
    const separator = this.endsTorn() ? '\n' : '';
    appendPrivateFile(this.file, `${separator}${JSON.stringify({ jws: signed.jws })}\n`);
    for (const listener of this.appended) {
      try {
        listener(signed);
      } catch {
        // A listener's failure must not fail the checkpoint it was told of.
      }
    }
  }

  /** Calls `listener` after each append by this process; returns the unsubscribe. */
  onAppend(listener: (signed: SignedCheckpoint) => void): () => void {
    this.appended.add(listener);
    return () => this.appended.delete(listener);
  }

  private endsTorn(): boolean {
    if (!existsSync(this.file)) return false;
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size === 0) return false;
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      return last[0] !== 0x0a;
    } finally {
      closeSync(fd);
    }
  }

  /** Every checkpoint JWS in the log, in file order; lines that do not parse are skipped. */
  readAll(): string[] {
    if (!existsSync(this.file)) return [];
    const out: string[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const parsed = JSON.parse(line) as { jws?: unknown };
        if (typeof parsed.jws === 'string') out.push(parsed.jws);
      } catch {
        // A torn last line after a crash mid-write: that checkpoint is simply not there.
      }
    }
    return out;
  }
}
