/**
 * The keyring of a team plane (docs/SECURITY.md, "The keyring of a team plane"): the public keys
 * whose checkpoints over a journal are the plane's. Several instances share one PostgreSQL
 * journal, each signing with its own Ed25519 key; each admits its key with a KeyAdmitted record
 * when it first serves the journal, and `journal retire-key` appends a KeyRetired.
 *
 * Here, one piece of code for everything that reads the keyring: the fold of those records
 * (Keyring.fold), and the check of a set of checkpoints against it
 * (verifyCheckpointsWithKeyring), which bundle verification (bundle-verify.ts), a data dir's
 * verification (store-verify.ts), export (bundle-export.ts) and the CLI share.
 *
 * A journal with no keyring record at all (every SQLite journal: its single key is its keyring)
 * is verified against the one key it is handed, exactly as before the keyring existed.
 */
import type { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { checkRecordBody, type RecordBody, type RecordKind } from '../../src-shared/journal/records';
import { peekCheckpoint, verifyCheckpointsAll, type Checkpoint } from './checkpoints';
import type { JournalStore } from './journal-store';
import { publicPlaneKey } from './plane-key';

export const KEY_ADMITTED = 'KeyAdmitted' satisfies RecordKind;
export const KEY_RETIRED = 'KeyRetired' satisfies RecordKind;
/** The record kinds the keyring is folded from. */
export const KEYRING_KINDS: readonly RecordKind[] = [KEY_ADMITTED, KEY_RETIRED];
const KEYRING_KIND_SET = new Set<string>(KEYRING_KINDS);

/** Whether a record of this kind is one the keyring is folded from. */
export function isKeyringKind(kind: string): boolean {
  return KEYRING_KIND_SET.has(kind);
}

/** A keyring record as the fold reads it: where it is in the journal and its body, unchecked. */
export interface KeyringRecord {
  seq: number;
  kind: string;
  v: number;
  time: string;
  body: unknown;
}

export interface KeyRetirement {
  /** The KeyRetired record's seq: the key's checkpoints at this tree size or larger are refused. */
  seq: number;
  time: string;
  by: string;
  reason?: string;
}

/** One admitted key, plain JSON (what `journal keys --json` prints). */
export interface KeyringEntry {
  keyId: string;
  publicJwk: Record<string, unknown>;
  instance: string;
  admittedSeq: number;
  admittedTime: string;
  retired: KeyRetirement | null;
}

export type KeyringFold = { keyring: Keyring } | { failed: { seq: number; reason: string } };

export class Keyring {
  private constructor(
    private readonly admitted: ReadonlyMap<string, KeyringEntry & { publicKey: KeyObject }>,
    private readonly retirements: ReadonlyMap<string, KeyRetirement>,
  ) {}

  /** The keyring of a journal with no keyring record: the caller's one key stands alone. */
  static readonly NONE = new Keyring(new Map(), new Map());

  /**
   * Folds keyring records, in seq order. A key admitted twice is one key (the first admission
   * counts); its first retirement counts, wherever it comes (a retirement before the admission
   * retires the key from that seq on). Fails on a record whose body is not what its kind says,
   * or a KeyAdmitted whose public key is not an Ed25519 key whose id (its RFC 7638 thumbprint,
   * plane-key.ts) is the keyId it names: a record that names one key and carries another would
   * let a checkpoint be verified under a key nobody admitted by that name.
   */
  static async fold(records: Iterable<KeyringRecord>): Promise<KeyringFold> {
    const admitted = new Map<string, KeyringEntry & { publicKey: KeyObject }>();
    const retirements = new Map<string, KeyRetirement>();
    for (const record of records) {
      if (!isKeyringKind(record.kind)) continue;
      const check = checkRecordBody(record.kind, record.v, record.body);
      if (!check.known) return { failed: { seq: record.seq, reason: `a keyring record this AgentPlane cannot read (${check.why})` } };
      if ('invalid' in check) return { failed: { seq: record.seq, reason: `its ${record.kind} body is invalid: ${check.invalid}` } };
      if (record.kind === KEY_ADMITTED) {
        const body = check.body as RecordBody<'KeyAdmitted'>;
        let key;
        try {
          key = await publicPlaneKey(body.publicJwk as JWK);
        } catch (error) {
          return { failed: { seq: record.seq, reason: `it admits key ${body.keyId}, but ${(error as Error).message}` } };
        }
        if (key.keyId !== body.keyId) {
          return { failed: { seq: record.seq, reason: `it admits key ${body.keyId}, but the public key it carries is key ${key.keyId}` } };
        }
        if (!admitted.has(body.keyId)) {
          admitted.set(body.keyId, { keyId: body.keyId, publicJwk: body.publicJwk, instance: body.instance, admittedSeq: record.seq, admittedTime: record.time, retired: null, publicKey: key.publicKey });
        }
      } else {
        const body = check.body as RecordBody<'KeyRetired'>;
        if (!retirements.has(body.keyId)) retirements.set(body.keyId, { seq: record.seq, time: record.time, by: body.by, ...(body.reason !== undefined ? { reason: body.reason } : {}) });
      }
    }
    return { keyring: new Keyring(admitted, retirements) };
  }

  /** True for a journal with no keyring record at all: its verifier's one key is its keyring. */
  get empty(): boolean {
    return this.admitted.size === 0 && this.retirements.size === 0;
  }

  has(keyId: string): boolean {
    return this.admitted.has(keyId);
  }

  retirement(keyId: string): KeyRetirement | null {
    return this.retirements.get(keyId) ?? null;
  }

  publicKey(keyId: string): KeyObject | null {
    return this.admitted.get(keyId)?.publicKey ?? null;
  }

  /** The admitted keys, in admission order, each with its retirement if it has one. */
  entries(): KeyringEntry[] {
    return [...this.admitted.values()].map(({ publicKey: _, ...entry }) => ({ ...entry, retired: this.retirement(entry.keyId) }));
  }

  /**
   * Why this keyring refuses a checkpoint by `keyId` at `treeSize` before its signature is even
   * looked at, or null: a key never admitted, or a retired key signing over records appended
   * after its retirement (what it signed before stays valid).
   */
  refusal(keyId: string, treeSize: number): string | null {
    if (!this.has(keyId)) return `the checkpoint at tree size ${treeSize} is signed by key ${keyId}, which the journal never admitted`;
    const retired = this.retirement(keyId);
    if (retired && treeSize >= retired.seq) {
      return `the checkpoint at tree size ${treeSize} is signed by key ${keyId}, which was retired at seq ${retired.seq}: it covers records the journal held only after the retirement`;
    }
    return null;
  }
}

/** Keyring records per read (a journal holds one per instance and retirement: a page is nearly always all). */
const KEYRING_PAGE = 1000;

/** A journal's keyring records with seq <= toSeq, through its store's index of kinds. */
export async function readKeyringRecords(store: Pick<JournalStore, 'readKinds'>, toSeq: number): Promise<KeyringRecord[]> {
  const records: KeyringRecord[] = [];
  for (let from = 1; from <= toSeq; ) {
    const page = await store.readKinds(from, toSeq, KEYRING_KINDS, KEYRING_PAGE);
    for (const r of page) records.push({ seq: r.seq, kind: r.kind, v: r.v, time: r.time, body: r.body });
    if (page.length < KEYRING_PAGE) break;
    from = page[page.length - 1]!.seq + 1;
  }
  return records;
}

/** A record as a verifier holds it (verify.ts's VerifiableRecord, of which this reads four fields). */
interface RecordToFold {
  seq: number;
  kind: string;
  preimage: string | Uint8Array;
  unreadable?: string;
}

/** A failure as verify.ts reports one (its VerifyReport's failing form). */
interface KeyringFailure {
  ok: false;
  seq: number | null;
  reason: string;
  count: number;
}

/** The keyring record a verifier reads from a record's preimage, or null for a record of any other kind. */
export function keyringRecordOf(record: RecordToFold): KeyringRecord | null {
  if (!isKeyringKind(record.kind) || record.unreadable) return null;
  const text = typeof record.preimage === 'string' ? record.preimage : Buffer.from(record.preimage.buffer, record.preimage.byteOffset, record.preimage.byteLength).toString('utf8');
  try {
    const parsed = JSON.parse(text) as { v?: unknown; time?: unknown; body?: unknown };
    return { seq: record.seq, kind: record.kind, v: typeof parsed.v === 'number' ? parsed.v : 0, time: typeof parsed.time === 'string' ? parsed.time : '', body: parsed.body };
  } catch {
    return { seq: record.seq, kind: record.kind, v: 0, time: '', body: undefined };
  }
}

export interface KeyringCheckInput {
  checkpoints: readonly string[];
  journalId: string;
  keyring: Keyring;
  /** The key the verifier was handed (a bundle's header key, a data dir's own): what the report is named by. */
  keyId: string;
  /**
   * For a bundle: the header's key must be admitted, and sign a checkpoint at the newest tree
   * size (the anchor export writes). So `--key-id` pinning the header's key pins every record:
   * the anchor's root covers them all, keyring records included.
   */
  anchored: boolean;
}

/**
 * Check 1 of verify.ts against a non-empty keyring: each checkpoint verified with the admitted
 * key it names (never one named by the verifier's caller), refused when that key was never
 * admitted or was retired before the records it covers; its journal must be this one. The first
 * failure is the report, in the order given.
 */
export async function verifyCheckpointsWithKeyring(input: KeyringCheckInput): Promise<{ failed: KeyringFailure } | { signed: { keyId: string; checkpoints: Checkpoint[] }; keys: string[] }> {
  const { keyring } = input;
  const fail = (seq: number | null, reason: string): { failed: KeyringFailure } => ({ failed: { ok: false, seq, reason, count: 0 } });
  if (input.anchored && !keyring.has(input.keyId)) return fail(null, `the bundle's key ${input.keyId} was never admitted to the journal's keyring`);
  const checkpoints: Checkpoint[] = [];
  const keys: string[] = [];
  // Every signature checked at once on the thread pool (verifyCheckpointsAll), then judged in order: the first failure is the report.
  const claims = input.checkpoints.map((jws) => peekCheckpoint(jws));
  const checks = await verifyCheckpointsAll(input.checkpoints, (at) => {
    const claimed = claims[at];
    return claimed && keyring.refusal(claimed.keyId, claimed.treeSize) === null ? (keyring.publicKey(claimed.keyId) ?? null) : null;
  });
  for (const [at, claimed] of claims.entries()) {
    if (!claimed) return fail(null, 'a checkpoint is not an AgentPlane checkpoint');
    const refused = keyring.refusal(claimed.keyId, claimed.treeSize);
    if (refused) return fail(claimed.treeSize, refused);
    const check = checks[at]!;
    if (!check.ok) return fail(claimed.treeSize, `the checkpoint at tree size ${claimed.treeSize}: ${check.reason} (it names key ${claimed.keyId}, admitted to the keyring)`);
    if (check.checkpoint.journalId !== input.journalId) {
      return fail(check.checkpoint.treeSize, `the checkpoint at tree size ${check.checkpoint.treeSize} belongs to another journal (${check.checkpoint.journalId})`);
    }
    checkpoints.push(check.checkpoint);
    if (!keys.includes(check.checkpoint.keyId)) keys.push(check.checkpoint.keyId);
  }
  checkpoints.sort((a, b) => a.treeSize - b.treeSize);
  const newest = checkpoints[checkpoints.length - 1];
  if (input.anchored && newest && !checkpoints.some((c) => c.treeSize === newest.treeSize && c.keyId === input.keyId)) {
    return fail(newest.treeSize, `the newest checkpoint (tree size ${newest.treeSize}) is not signed by the bundle's key ${input.keyId}`);
  }
  return { signed: { keyId: input.keyId, checkpoints }, keys };
}
