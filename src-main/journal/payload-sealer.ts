/**
 * Sealing and opening payloads (docs/ERASURE.md). A data dir that seals writes the kinds in
 * SEALED_VERSION at their sealed version: the payload fields (a run's input, an effect's request
 * and result, a sealed run's result) leave the body and go, as canonical JSON, into `sealed`,
 * encrypted with AES-256-GCM under the run owner's data key for the month (subject-keys.ts),
 * with a random nonce, the key's subject, month and id bound in as associated data. The hash
 * covers the ciphertext, so plaintext never reaches the journal's database, and an erasure
 * (the key destroyed) leaves every hash, checkpoint and export as valid as before.
 *
 * Reading goes the other way at the journal's door (Journal's reads): a sealed body opens to the
 * body its writer wrote, or, its key destroyed, to its clear fields and `erased` (when, by whom,
 * why), or, its key not held here, to its clear fields and `unreadable`.
 */
import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import { SEALED_VERSION, sealedFieldsOf, sealedWithin, type JournalRecord, type SealedKind, type SealedPayload } from '../../src-shared/journal/records';
import type { PreparedDraft } from './journal-store';
import { JournalError } from './journal-error';
import { SubjectKeys, type Tombstone } from './subject-keys';

/** What the sealer reads of the journal it serves. */
export interface JournalLookups {
  headSeq(): Promise<number>;
  /** Every SubjectErased record up to seq `head`. */
  erasures(head: number): Promise<JournalRecord[]>;
}

/** The setting (subject-keys.ts) that makes a data dir seal new payloads: `on`, else they are written clear. */
export const SEAL_SETTING = 'seal-payloads';
/** The most run owners remembered for sealing a run's later records without reading its admission again. */
const OWNERS_KEPT = 10_000;

/** The UTC month of a time in ms since epoch, as YYYY-MM: the period a key serves. */
export function periodOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

function aad(sealed: Pick<SealedPayload, 'subject' | 'period' | 'key'>): Buffer {
  return Buffer.from(`${sealed.subject}\n${sealed.period}\n${sealed.key}`, 'utf8');
}

/**
 * Random bytes drawn a pool at a time: a nonce is 12 of them, fresh for every payload, and one
 * randomBytes call per nonce cost more than a fifth of sealing a small payload.
 */
const NONCE_POOL = 12 * 512;
let noncePool = Buffer.alloc(0);
let nonceAt = NONCE_POOL;
function freshNonce(): Buffer {
  if (nonceAt + 12 > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL);
    nonceAt = 0;
  }
  nonceAt += 12;
  return noncePool.subarray(nonceAt - 12, nonceAt);
}

export function encryptPayload(key: Buffer | KeyObject, meta: Pick<SealedPayload, 'subject' | 'period' | 'key'>, text: string): SealedPayload {
  const nonce = freshNonce();
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(meta));
  const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { subject: meta.subject, period: meta.period, key: meta.key, nonce: nonce.toString('base64'), data: data.toString('base64') };
}

export function decryptPayload(key: Buffer, sealed: SealedPayload): string {
  const data = Buffer.from(sealed.data, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.nonce, 'base64'));
  decipher.setAAD(aad(sealed));
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
}

/**
 * A body's payload fields apart from its clear ones. For a kind sealed within an array
 * (EffectReused's steps), the payload is that array's items' fields, item by item, and the clear
 * array keeps the rest of each item.
 */
function split(kind: string, body: Record<string, unknown>, fields: readonly string[]): { payload: Record<string, unknown>; clear: Record<string, unknown> } {
  const within = sealedWithin(kind);
  if (within !== null) {
    const items = (body[within] ?? []) as Array<Record<string, unknown>>;
    const parts = items.map((item) => split('', item, fields));
    return { payload: { [within]: parts.map((p) => p.payload) }, clear: { ...body, [within]: parts.map((p) => p.clear) } };
  }
  const payload: Record<string, unknown> = {};
  const clear: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (fields.includes(name)) payload[name] = value;
    else clear[name] = value;
  }
  return { payload, clear };
}

/** The body `split` took apart, whole again. */
function join(clear: Record<string, unknown>, payload: Record<string, unknown>): Record<string, unknown> {
  const joined = { ...clear };
  for (const [name, value] of Object.entries(payload)) {
    const items = clear[name];
    joined[name] = Array.isArray(items) && Array.isArray(value) ? items.map((item, i) => ({ ...(item as object), ...((value[i] ?? {}) as object) })) : value;
  }
  return joined;
}

export class PayloadSealer {
  /** Run owners by run id: a run's later records are sealed under its admission's owner. */
  private readonly owners = new Map<string, string>();
  /** Sealing is serialised so batches reach the journal in the order they were asked for, even when one waits for an owner lookup. */
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dataDir: string,
    /** The key store, opened when the data dir has one or sealing is asked for, else at the first erasure command (ensureKeys). */
    private store: SubjectKeys | null,
    /** The journal's option over the data dir's setting (JournalOptions.sealPayloads). */
    private readonly forced: boolean | undefined,
    /** A run's owner from its admission in the journal, or null (no RunAdmitted: nothing to seal under). */
    private readonly ownerOf: (runId: string) => Promise<string | null>,
    private readonly journal: JournalLookups,
  ) {
    this.sealing = forced ?? store?.setting(SEAL_SETTING) === 'on';
  }

  /** Whether new payloads are sealed: the journal's option, else the data dir's setting. */
  sealing: boolean;

  /** The sealer of a data dir's journal; its key store is created only when sealing is asked for (so a data dir that never seals holds none). */
  static forDataDir(dataDir: string, options: { readOnly?: boolean; sealPayloads?: boolean }, ownerOf: (runId: string) => Promise<string | null>, journal: JournalLookups): PayloadSealer {
    const store = SubjectKeys.open(dataDir, { readOnly: (options.readOnly ?? false) || options.sealPayloads !== true });
    if (options.sealPayloads === true && options.readOnly) throw new JournalError('Refused', 'a read-only journal seals nothing');
    const sealer = new PayloadSealer(dataDir, store, options.sealPayloads, ownerOf, journal);
    // The data dir's setting says seal: its keys are made as payloads are written, so the store is opened for writing.
    return sealer.sealing && !options.readOnly ? sealer.ensureKeys(false) : sealer;
  }

  get keys(): SubjectKeys {
    if (this.store === null) throw new JournalError('Refused', `${this.dataDir} has no subject key store`);
    return this.store;
  }

  /** This sealer with its key store open for writing (made now if the data dir has none). */
  ensureKeys(readOnly: boolean): this {
    if (this.store !== null && !this.store.readOnly) return this;
    if (readOnly) throw new JournalError('Refused', 'this journal was opened read-only');
    this.store?.close();
    this.store = SubjectKeys.open(this.dataDir);
    return this;
  }

  /** Turns sealing of new payloads on or off for the data dir (the setting; an option given to the journal still wins in this process). */
  setSealing(on: boolean): void {
    this.keys.setSetting(SEAL_SETTING, on ? 'on' : null);
    this.sealing = this.forced ?? on;
  }

  close(): void {
    this.store?.close();
    this.store = null;
  }

  /** The drafts as they are written: each sealed kind with a payload sealed, the rest as they came. */
  sealAll(drafts: readonly PreparedDraft[], nowMs: number): Promise<PreparedDraft[]> {
    const next = this.tail.then(async () => {
      for (const draft of drafts) {
        if (draft.runId === null || !Object.hasOwn(SEALED_VERSION, draft.kind)) continue;
        // An admission in the batch names its run's owner for the drafts after it; only a run admitted before is looked up.
        if (draft.kind === 'RunAdmitted') this.remember(draft.runId, String(draft.body.owner));
        else if (!this.owners.has(draft.runId)) {
          const owner = await this.ownerOf(draft.runId);
          if (owner !== null) this.remember(draft.runId, owner);
        }
      }
      const period = periodOf(nowMs);
      return drafts.map((draft) => this.seal(draft, period));
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  private remember(runId: string, owner: string): void {
    if (this.owners.size >= OWNERS_KEPT) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(runId, owner);
  }

  private seal(draft: PreparedDraft, period: string): PreparedDraft {
    if (!Object.hasOwn(SEALED_VERSION, draft.kind) || draft.runId === null) return draft;
    const { v, fields } = SEALED_VERSION[draft.kind as SealedKind];
    const subject = this.owners.get(draft.runId);
    if (subject === undefined || draft.v === v) return draft;
    const { payload, clear } = split(draft.kind, draft.body, fields);
    // Nothing to seal (a failed run's seal has no result): the record stays at its clear version.
    if (Object.keys(payload).length === 0) return draft;
    const { id, keyObject } = this.keys.keyFor(subject, period);
    clear.sealed = encryptPayload(keyObject, { subject, period, key: id }, canonicalize(payload));
    // `body` stays the body the writer gave (what a reader opens the record to); `bodyText` is what is stored and hashed.
    return { runId: draft.runId, kind: draft.kind, v, bodyText: canonicalize(clear), body: draft.body };
  }

  /**
   * Erasures as the journal tells them (SubjectErased, by key id), for a payload whose key this
   * data dir's store neither holds nor has a tombstone of: a journal copied or imported from
   * another data dir still says who erased it, when and why. Read again when the journal grew.
   */
  private journalErasures = new Map<string, Tombstone>();
  private erasuresReadAt = -1;

  /** Records as a reader sees them: sealed bodies opened (or marked erased or unreadable); others unchanged. */
  openAll<R extends JournalRecord>(records: R[]): R[] | Promise<R[]> {
    const unknown = records.some((r) => {
      const sealed = sealedFieldsOf(r.kind, r.v) !== null ? (r.body.sealed as SealedPayload | undefined) : undefined;
      return sealed !== undefined && this.store?.keyById(sealed.key) == null && this.store?.tombstone(sealed.key) == null && !this.journalErasures.has(sealed.key);
    });
    return unknown ? this.readErasures().then(() => this.openNow(records)) : this.openNow(records);
  }

  private async readErasures(): Promise<void> {
    const head = await this.journal.headSeq();
    if (head === this.erasuresReadAt) return;
    for (const record of await this.journal.erasures(head)) {
      const body = record.body as { keys?: Array<{ key: string }>; by: string; reason: string };
      for (const k of body.keys ?? []) this.journalErasures.set(k.key, { at: record.time, by: body.by, reason: body.reason, seq: record.seq });
    }
    this.erasuresReadAt = head;
  }

  private openNow<R extends JournalRecord>(records: R[]): R[] {
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      if (record.kind === 'RunAdmitted' && record.runId !== null && typeof record.body.owner === 'string') this.remember(record.runId, record.body.owner);
      if (sealedFieldsOf(record.kind, record.v) === null) continue;
      records[i] = { ...record, body: this.open(record.body) };
    }
    return records;
  }

  private open(body: Record<string, unknown>): Record<string, unknown> {
    const { sealed, ...clear } = body as { sealed?: SealedPayload } & Record<string, unknown>;
    if (sealed === undefined || typeof sealed !== 'object') return body;
    const key = this.store?.keyById(sealed.key) ?? null;
    if (key === null) {
      const tomb = this.store?.tombstone(sealed.key) ?? this.journalErasures.get(sealed.key) ?? null;
      if (tomb !== null) return { ...clear, erased: { at: tomb.at, by: tomb.by, reason: tomb.reason } };
      return { ...clear, unreadable: `sealed under a data key of ${sealed.subject} (${sealed.period}) this data dir does not hold` };
    }
    try {
      return join(clear, JSON.parse(decryptPayload(key, sealed)) as Record<string, unknown>);
    } catch {
      return { ...clear, unreadable: `the sealed payload does not open under its key (${sealed.key})` };
    }
  }
}
