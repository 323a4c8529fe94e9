/**
 * Sealing and opening payloads (docs/ERASURE.md). A data dir that seals writes the kinds in
 * SEALED_VERSION at their sealed version: the payload fields (a run's input, an effect's request
 * and result, a sealed run's result) leave the body and go, as canonical JSON, into `sealed`,
 * encrypted under the run owner's data key for the month (subject-keys.ts). The payloads sealed
 * under one key are consecutive slices of one AES-256-CTR stream with a fresh random nonce, each
 * record holding its own (SealedSliceSchema, SealStream): creating a cipher cost about 4 µs, a
 * third of a record's whole group-commit append, and one a payload (the GCM form older records
 * hold, which still opens) made sealing cost 1.7× an append. The hash covers the ciphertext, so plaintext never
 * reaches the journal's database, and an erasure (the key destroyed) leaves every hash,
 * checkpoint and export as valid as before.
 *
 * Reading goes the other way at the journal's door (Journal's reads): a sealed body opens to the
 * body its writer wrote, or, its key destroyed, to its clear fields and `erased` (when, by whom,
 * why), or, its key not held here, to its clear fields and `unreadable`.
 */
import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { MAX_SEALED_STREAM_BYTES, SEALED_VERSION, sealedAsSlice, sealedFieldsOf, sealedWithin, type JournalRecord, type SealedKind, type RecordKind, type SealedPayload, type SealedSlice } from '../../src-shared/journal/records';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { PreparedDraft } from './journal-store';
import { canonicalText } from './prepare-draft';
import { JournalError } from './journal-error';
import { SubjectKeys, type KeyRow, type Tombstone } from './subject-keys';

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
/** The most keys' streams kept open; one beyond starts a new stream (a new nonce) when its key seals again. */
const STREAMS_KEPT = 1_000;

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

/** A version-2 payload (SealedPayloadSchema): AES-256-GCM of its own. Kept so tests can write the older form; the sealer writes slices. */
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

/** The CTR initial block of a stream's nonce at block `block`: the nonce, then a 32-bit big-endian counter. */
function counterBlock(nonce: Buffer, block: number): Buffer {
  const iv = Buffer.alloc(16);
  nonce.copy(iv, 0, 0, 12);
  iv.writeUInt32BE(block, 12);
  return iv;
}

/**
 * One AES-256-CTR stream under one data key and one fresh random nonce (SealedSliceSchema): the
 * payloads it seals are consecutive slices of it, each readable alone from its `at`. A sealer
 * keeps a key's stream open across appends, so an append pays no cipher of its own: a cipher's
 * creation cost about 4 µs, more than a small payload's whole encryption. The keystream is never
 * used twice: `at` only grows (a slice of an append that failed is skipped, not reused), a nonce
 * is never reused for a second stream, and a stream ends before its 32-bit block counter would wrap.
 */
export class SealStream {
  private readonly nonce = freshNonce();
  private readonly nonceText = this.nonce.toString('base64');
  private readonly cipher;
  private readonly subjectText: string;
  private at = 0;

  constructor(
    key: Buffer | KeyObject,
    private readonly meta: Pick<SealedSlice, 'subject' | 'period' | 'key'>,
  ) {
    this.cipher = createCipheriv('aes-256-ctr', key, counterBlock(this.nonce, 0));
    this.subjectText = canonicalize(meta.subject);
  }

  /** Whether `bytes` more fit in this stream before its counter would wrap. */
  fits(bytes: number): boolean {
    return this.at + bytes <= MAX_SEALED_STREAM_BYTES;
  }

  /**
   * The texts sealed, one slice each, in order, each slice as its canonical JSON text (written
   * here, not canonicalised: its fields are known, and all but the subject need no escaping).
   * `plain` is the texts' UTF-8 one after another, `lengths` each one's bytes.
   */
  seal(plain: Buffer, lengths: readonly number[]): string[] {
    if (!this.fits(plain.length)) throw new JournalError('Refused', `one stream seals at most ${MAX_SEALED_STREAM_BYTES} bytes`);
    const cipherText = this.cipher.update(plain);
    const texts: string[] = [];
    let from = 0;
    for (const length of lengths) {
      texts.push(`{"at":${this.at + from},"data":"${cipherText.toString('base64', from, from + length)}","key":"${this.meta.key}","nonce":"${this.nonceText}","period":"${this.meta.period}","subject":${this.subjectText}}`);
      from += length;
    }
    this.at += plain.length;
    return texts;
  }
}

/** Texts as one UTF-8 buffer, and each one's bytes in it. */
export function joinTexts(texts: readonly string[]): { plain: Buffer; lengths: number[] } {
  return { plain: Buffer.from(texts.length === 1 ? texts[0]! : texts.join(''), 'utf8'), lengths: texts.map((t) => Buffer.byteLength(t, 'utf8')) };
}

/** One slice's plaintext: the stream's keystream from the slice's block, its first `at % 16` bytes passed over. */
export function decryptSlice(key: Buffer, sealed: SealedSlice): string {
  const skip = sealed.at % 16;
  const decipher = createDecipheriv('aes-256-ctr', key, counterBlock(Buffer.from(sealed.nonce, 'base64'), Math.floor(sealed.at / 16)));
  const plain = decipher.update(Buffer.concat([Buffer.alloc(skip), Buffer.from(sealed.data, 'base64')]));
  return plain.subarray(skip).toString('utf8');
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
  // for…in over an own-properties-only body: Object.entries' pair arrays were a tenth of sealing's garbage.
  for (const name in body) {
    if (fields.includes(name)) payload[name] = body[name];
    else clear[name] = body[name];
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

/** A body to seal as text: its payload's canonical text, and the body it leaves clear (`clear` less the `omit` fields). */
interface SealedParts {
  payloadText: string;
  clear: Record<string, unknown>;
  omit: readonly string[];
}

/** A body's sealed parts, or null when it holds none of its kind's payload fields. */
function partsOf(kind: string, body: Record<string, unknown>): SealedParts | null {
  const { fields } = SEALED_VERSION[kind as SealedKind];
  if (sealedWithin(kind) !== null) {
    const { payload, clear } = split(kind, body, fields);
    return { payloadText: canonicalText(kind as RecordKind, payload), clear, omit: [] };
  }
  const present = fields.filter((field) => Object.hasOwn(body, field)).sort();
  if (present.length === 0) return null;
  let payloadText: string;
  try {
    // The payload object's text written member by member (its names are this build's own field names): no object is made for it.
    payloadText = `{${present.map((field) => `"${field}":${canonicalize(body[field])}`).join(',')}}`;
  } catch {
    // The refusal, named where it is in the body.
    canonicalText(kind as RecordKind, body);
    throw new JournalError('Refused', `${kind} body has no canonical form`);
  }
  return { payloadText, clear: body, omit: present };
}

/**
 * The canonical text of `clear` less `omit`, with `sealed` (any `sealed` the body held is
 * replaced) as the slice's text: RFC 8785's member order (names by UTF-16 code units, which is
 * Array.prototype.sort's own order) kept by hand, so neither the clear body nor the slice is
 * built as an object to be canonicalised. payload-sealer.test.ts holds it to canonicalize.
 */
function textWithSealed(kind: string, clear: Record<string, unknown>, omit: readonly string[], sealedText: string): string {
  const names = Object.keys(clear).filter((name) => name !== 'sealed' && !omit.includes(name));
  names.push('sealed');
  names.sort();
  try {
    let text = '{';
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      text += `${i > 0 ? ',' : ''}${canonicalize(name)}:${name === 'sealed' ? sealedText : canonicalize(clear[name])}`;
    }
    return `${text}}`;
  } catch {
    canonicalText(kind as RecordKind, clear);
    throw new JournalError('Refused', `${kind} body has no canonical form`);
  }
}

export class PayloadSealer {
  /** Run owners by run id: a run's later records are sealed under its admission's owner. */
  private readonly owners = new Map<string, string>();
  /** Open streams by key id (SealStream). */
  private readonly streams = new Map<string, SealStream>();
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
    this.streams.clear();
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
      return this.sealNow(drafts, periodOf(nowMs));
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  private remember(runId: string, owner: string): void {
    if (this.owners.size >= OWNERS_KEPT) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(runId, owner);
  }

  /** The open stream of the subject's key for the month, a new one when the key changed or its stream has no room for `bytes`. */
  private streamFor(subject: string, period: string, bytes: number): SealStream {
    const { id, keyObject } = this.keys.keyFor(subject, period);
    let stream = this.streams.get(id);
    if (stream === undefined || !stream.fits(bytes)) {
      if (this.streams.size >= STREAMS_KEPT) this.streams.delete(this.streams.keys().next().value!);
      this.streams.set(id, (stream = new SealStream(keyObject, { subject, period, key: id })));
    }
    return stream;
  }

  /** Destroys keys (an erasure, docs/ERASURE.md): the key store's rows and copies, and this sealer's streams under them. */
  destroyKeys(keys: readonly KeyRow[], erasure: Tombstone): void {
    this.keys.destroy(keys, erasure);
    for (const k of keys) this.streams.delete(k.key);
  }

  /** The drafts with each payload sealed: those under one key (one owner, one month) as slices of its stream. */
  private sealNow(drafts: readonly PreparedDraft[], period: string): PreparedDraft[] {
    const out = drafts.slice();
    const streams = new Map<string, { indexes: number[]; parts: SealedParts[]; texts: string[] }>();
    for (let i = 0; i < drafts.length; i++) {
      const draft = drafts[i]!;
      if (!Object.hasOwn(SEALED_VERSION, draft.kind) || draft.runId === null) continue;
      const subject = this.owners.get(draft.runId);
      if (subject === undefined || sealedFieldsOf(draft.kind, draft.v) !== null) continue;
      const parts = partsOf(draft.kind, draft.body);
      // Nothing to seal (a failed run's seal has no result): the record stays at its clear version.
      if (parts === null) continue;
      let stream = streams.get(subject);
      if (stream === undefined) streams.set(subject, (stream = { indexes: [], parts: [], texts: [] }));
      stream.indexes.push(i);
      stream.parts.push(parts);
      stream.texts.push(parts.payloadText);
    }
    for (const [subject, stream] of streams) {
      const { plain, lengths } = joinTexts(stream.texts);
      const slices = this.streamFor(subject, period, plain.length).seal(plain, lengths);
      for (let n = 0; n < stream.indexes.length; n++) {
        const i = stream.indexes[n]!;
        const draft = drafts[i]!;
        const { clear, omit } = stream.parts[n]!;
        // `body` stays the body the writer gave (what a reader opens the record to); `bodyText` is what is stored and hashed.
        out[i] = { runId: draft.runId, kind: draft.kind, v: SEALED_VERSION[draft.kind as SealedKind].v, bodyText: textWithSealed(draft.kind, clear, omit, slices[n]!), body: draft.body };
      }
    }
    return out;
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
      records[i] = { ...record, body: this.open(record.body, sealedAsSlice(record.kind, record.v)) };
    }
    return records;
  }

  private open(body: Record<string, unknown>, slice: boolean): Record<string, unknown> {
    const { sealed, ...clear } = body as { sealed?: SealedPayload | SealedSlice } & Record<string, unknown>;
    if (sealed === undefined || typeof sealed !== 'object') return body;
    const key = this.store?.keyById(sealed.key) ?? null;
    if (key === null) {
      const tomb = this.store?.tombstone(sealed.key) ?? this.journalErasures.get(sealed.key) ?? null;
      if (tomb !== null) return { ...clear, erased: { at: tomb.at, by: tomb.by, reason: tomb.reason } };
      return { ...clear, unreadable: `sealed under a data key of ${sealed.subject} (${sealed.period}) this data dir does not hold` };
    }
    try {
      const text = slice ? decryptSlice(key, sealed as SealedSlice) : decryptPayload(key, sealed as SealedPayload);
      return join(clear, JSON.parse(text) as Record<string, unknown>);
    } catch {
      return { ...clear, unreadable: `the sealed payload does not open under its key (${sealed.key})` };
    }
  }
}
