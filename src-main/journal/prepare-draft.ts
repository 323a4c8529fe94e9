/**
 * Preparing a draft for the journal (journal.ts): checked against its kind's schema and
 * canonicalised, once, outside the write lock.
 */
import { CanonicalJsonError, canonicalize } from '../../src-shared/journal/canonical-json';
import { CURRENT_VERSION, recordBodyProblem, sealedFieldsOf, type AnyRecordDraft, type RecordKind } from '../../src-shared/journal/records';
import { JournalError } from './journal-error';
import type { PreparedDraft } from './journal-store';

/**
 * What `prepare` made, and nothing else: appendBatch trusts an object's `bodyText` only when it
 * was made here, so a look-alike built elsewhere (a `bodyText` that is not its body's canonical
 * text) is checked as the draft it also is, and its `bodyText` ignored. The proof is the private
 * field, which no object made outside this class can carry. It replaced a WeakSet of prepared
 * drafts: adding to a WeakSet cost about 0.9 µs a record (an entry in an ephemeron table the
 * garbage collector must also trace), about a twentieth of a record's whole append in a group
 * commit.
 */
class Prepared implements PreparedDraft {
  readonly #madeHere = true;
  /** The body's canonical text, made at prepare time or, for a draft prepared `textLater`, when first read. */
  #text: string | undefined;

  constructor(
    readonly runId: string | null,
    readonly kind: RecordKind,
    readonly v: number,
    bodyText: string | undefined,
    readonly body: Record<string, unknown>,
  ) {
    this.#text = bodyText;
    Object.freeze(this);
  }

  get bodyText(): string {
    // A private field is not a property: the frozen object still takes it.
    this.#text ??= canonicalText(this.kind, this.body);
    return this.#text;
  }

  static madeHere(draft: object): draft is Prepared {
    return #madeHere in draft;
  }
}

/** A body's canonical text; a body that has none (a NaN, a cycle) is refused naming its kind. */
export function canonicalText(kind: RecordKind, body: unknown): string {
  try {
    return canonicalize(body);
  } catch (error) {
    if (error instanceof CanonicalJsonError) throw new JournalError('Refused', `${kind} body ${error.message}`);
    throw error;
  }
}

/** A draft prepared now, or one `prepare` already made (see appendBatch). */
export function prepareOnce(draft: AnyRecordDraft | PreparedDraft, options: PrepareOptions = {}): PreparedDraft {
  return Prepared.madeHere(draft) ? draft : prepare(draft as AnyRecordDraft, options);
}

export interface PrepareOptions {
  /**
   * Leave the canonical text to its first reader: for a draft whose payload will be sealed
   * (docs/ERASURE.md), which is written as another text and whose own was a tenth of a sealed
   * group append. Whoever appends it must read `bodyText` before the draft joins a group, so a
   * body that has no canonical text is refused alone.
   */
  textLater?: boolean;
}

/**
 * Validates a draft against its kind's schema and canonicalises its body, outside the write lock.
 * The result is frozen and can be appended as it is (appendBatch), which a caller that must
 * refuse a bad draft before it goes on (Runtime.run's admission) uses so the work is done once:
 * it was a tenth of a loaded peer's canonical JSON, the admission being every call's largest
 * record. The draft's body must not change after it is prepared: what is written is the text
 * made here.
 */
export function prepare(draft: AnyRecordDraft, options: PrepareOptions = {}): PreparedDraft {
  const v = (CURRENT_VERSION as Record<string, number | undefined>)[draft.kind];
  if (v === undefined) throw new JournalError('Refused', `unknown record kind ${String(draft.kind)}`);
  const problem = recordBodyProblem(draft.kind, v, draft.body);
  if (problem !== null) throw new JournalError('Refused', `${draft.kind} body is invalid: ${problem}`);
  // The draft's own body, not zod's parse output: zod strips unknown keys, and a record
  // must hold exactly what its writer meant or be refused; the schema check above is a gate.
  const bodyText = options.textLater === true ? undefined : canonicalText(draft.kind, draft.body);
  return new Prepared(draft.runId, draft.kind, v, bodyText, draft.body as Record<string, unknown>);
}

/**
 * A record sealed elsewhere (docs/ERASURE.md; a journal copied or imported), to be written at its
 * sealed version exactly as it was sealed: checked against that version's schema and
 * canonicalised, never sealed again (the sealer leaves a draft already at its sealed version).
 */
export function prepareSealed(draft: { runId: string | null; kind: RecordKind; v: number; body: Record<string, unknown> }): PreparedDraft {
  if (sealedFieldsOf(draft.kind, draft.v) === null) throw new JournalError('Refused', `${draft.kind} v${draft.v} is not a sealed version`);
  const problem = recordBodyProblem(draft.kind, draft.v, draft.body);
  if (problem !== null) throw new JournalError('Refused', `${draft.kind} v${draft.v} body is invalid: ${problem}`);
  return new Prepared(draft.runId, draft.kind, draft.v, canonicalize(draft.body), draft.body);
}
