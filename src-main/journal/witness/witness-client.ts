/**
 * The plane's side of the tlog-witness protocol (docs/WITNESS.md): each checkpoint the journal
 * signs is submitted, off the append path, to the witness at `url` as a C2SP checkpoint note
 * signed with the plane's key, with the consistency proof from the size the witness last
 * cosigned; the cosignature it answers is kept in checkpoints/cosignatures.jsonl.
 *
 * Nothing here is awaited by an append: a checkpoint only wakes this submitter, which reads the
 * leaf hashes it needs in pages (yielding between them) and talks HTTP on its own. Only the
 * newest checkpoint is submitted: cosigning it covers every earlier one. A witness that cannot
 * be reached is logged once (its origin, never a full URL that could hold a credential) and
 * retried every `retryMs`; when it answers again the newest checkpoint catches it up. A 409
 * names the size the witness holds, and the submission is made again from there.
 */
import type { Journal } from '../journal';
import { journalStoreOf } from '../journal';
import { peekCheckpoint, type Checkpoint } from '../checkpoints';
import { fromHex } from '../hex';
import { leafHash } from '../merkle';
import { ProofTree } from './proof-tree';
import { CosignatureLog, logOriginOf } from './cosignature-log';
import { checkpointText, encodeVerifierKey, LOG_KEY_HEADER, NOTE_ED25519, noteSigner, parseCheckpointText, parseSignatureLines, signNote, type NoteSigner } from './signed-note';

const HASH_PAGE = 5000;
const DEFAULT_RETRY_MS = 5000;
const REQUEST_TIMEOUT_MS = 10_000;

export interface WitnessStatus {
  /** The witness's address, scheme host and port only. */
  url: string;
  /** The newest checkpoint the witness cosigned for this journal, as far as this plane knows. */
  cosigned: { size: number; time: string; witness: string } | null;
  /** The journal's newest checkpoint size. */
  checkpointSize: number;
  /** The last failure, until a submission succeeds. */
  lastError: string | null;
}

export type WitnessLog = (level: 'info' | 'warn', message: string) => void;

/** The plane's checkpoint-note signer: key name = log origin, Ed25519 note signature (type 0x01). */
export function planeNoteSigner(journal: Journal): NoteSigner {
  return noteSigner(logOriginOf(journal.journalId), NOTE_ED25519, journal.key.privateKey);
}

/** The verifier key a witness is configured with for this journal (`witness serve --log-key`). */
export function planeLogKey(journal: Journal): string {
  return encodeVerifierKey(planeNoteSigner(journal));
}

function shownUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an unparsable witness URL';
  }
}

export class WitnessSubmitter {
  private readonly signer: NoteSigner;
  private readonly log: CosignatureLog;
  private readonly shown: string;
  /** The size the witness holds as far as we know (its last cosignature to us, or what a 409 said). */
  private witnessSize: number;
  private cosigned: WitnessStatus['cosigned'] = null;
  private lastError: string | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly unsubscribe: () => void;
  /** The tree over seqs 1..size, read once and extended, for the consistency proofs (proof-tree.ts). */
  private readonly tree = new ProofTree();
  /** The newest checkpoint of this journal and key: read from the log once, then told by each append. */
  private newestCheckpoint: { treeSize: number; rootHash: string } | null = null;

  constructor(
    private readonly journal: Journal,
    private readonly url: string,
    private readonly onLog: WitnessLog = () => undefined,
    private readonly retryMs = DEFAULT_RETRY_MS,
  ) {
    this.signer = planeNoteSigner(journal);
    this.log = new CosignatureLog(journal.dataDir);
    this.shown = shownUrl(url);
    const origin = logOriginOf(journal.journalId);
    this.witnessSize = 0;
    for (const entry of this.log.readAll()) {
      if (entry.witness !== this.shown) continue;
      try {
        const text = parseCheckpointText(entry.checkpoint);
        if (text.origin === origin && text.size >= this.witnessSize) {
          this.witnessSize = text.size;
          this.cosigned = { size: text.size, time: entry.receivedAt ?? '', witness: parseSignatureLines(entry.cosignatures)[0]?.name ?? '' };
        }
      } catch {
        // An entry that does not parse vouches for nothing; the witness's 409 corrects the size.
      }
    }
    for (const jws of journal.checkpoints.readAll()) this.consider(peekCheckpoint(jws));
    this.unsubscribe = journal.checkpoints.onAppend((signed) => {
      this.consider(signed.checkpoint);
      this.kick();
    });
  }

  status(): WitnessStatus {
    return { url: this.shown, cosigned: this.cosigned, checkpointSize: this.newest()?.treeSize ?? 0, lastError: this.lastError };
  }

  /** Wakes the submitter: submits the newest checkpoint unless the witness has it. */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves when nothing is being submitted (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    await this.idle();
  }

  private consider(c: Checkpoint | null): void {
    if (c && c.journalId === this.journal.journalId && c.keyId === this.journal.key.keyId && (!this.newestCheckpoint || c.treeSize > this.newestCheckpoint.treeSize)) this.newestCheckpoint = c;
  }

  private newest(): { treeSize: number; rootHash: string } | null {
    return this.newestCheckpoint;
  }

  private async loop(): Promise<void> {
    // At most a few rounds: a 409 corrects the old size once; anything else waits for the next kick.
    for (let round = 0; round < 4 && !this.closed; round++) {
      const target = this.newest();
      if (!target || (this.cosigned && target.treeSize <= this.cosigned.size)) return;
      if (target.treeSize < this.witnessSize) return; // The witness holds a larger one than we have signed.
      let outcome: 'done' | 'conflict' | 'failed';
      try {
        outcome = await this.submit(target.treeSize, target.rootHash);
      } catch (error) {
        this.fail(`the witness at ${this.shown} is unreachable (${(error as Error).name === 'TimeoutError' ? 'timed out' : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message)})`);
        return;
      }
      if (outcome !== 'conflict') return;
    }
  }

  private fail(message: string): void {
    if (this.lastError !== message) this.onLog('warn', `${message}; the journal goes on, and its newest checkpoint is submitted again`);
    this.lastError = message;
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, this.retryMs);
    this.timer.unref();
  }

  private async submit(size: number, rootHex: string): Promise<'done' | 'conflict' | 'failed'> {
    const text = checkpointText(logOriginOf(this.journal.journalId), size, fromHex(rootHex));
    const old = this.witnessSize;
    const proof = old > 0 && old < size ? (await this.readTree(size)).consistencyProof(old, size) : [];
    const body = `old ${old}\n${proof.map((hash) => `${Buffer.from(hash).toString('base64')}\n`).join('')}\n${signNote(this.signer, text)}`;
    const response = await fetch(new URL('add-checkpoint', this.url.endsWith('/') ? this.url : `${this.url}/`), {
      method: 'POST',
      // The plane's public verifier key, for a witness that learns a log's key on first use (never a secret).
      headers: { 'content-type': 'text/plain; charset=utf-8', [LOG_KEY_HEADER]: encodeVerifierKey(this.signer) },
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const answer = (await response.text()).slice(0, 500);
    if (response.status === 409) {
      const stated = /^(0|[1-9][0-9]*)\n$/.exec(answer);
      if (!stated) {
        this.fail(`the witness at ${this.shown} answered 409 without a size`);
        return 'failed';
      }
      this.witnessSize = Number(stated[1]);
      return 'conflict';
    }
    if (response.status !== 200) {
      this.fail(`the witness at ${this.shown} refused the checkpoint at size ${size} (${response.status}: ${answer.trim()})`);
      return 'failed';
    }
    let witness: string;
    try {
      const lines = parseSignatureLines(answer);
      if (lines.length === 0) throw new Error('no signature line');
      witness = lines[0]!.name;
    } catch (error) {
      this.fail(`the witness at ${this.shown} answered something that is not cosignature lines (${(error as Error).message})`);
      return 'failed';
    }
    const receivedAt = new Date().toISOString();
    this.log.append({ checkpoint: text, cosignatures: answer, witness: this.shown, receivedAt });
    this.witnessSize = size;
    this.cosigned = { size, time: receivedAt, witness };
    if (this.lastError) this.onLog('info', `the witness at ${this.shown} cosigned the checkpoint at size ${size}`);
    this.lastError = null;
    return 'done';
  }

  /** The tree up to `size`, reading only the hashes not read before, a page at a time. */
  private async readTree(size: number): Promise<ProofTree> {
    const store = journalStoreOf(this.journal);
    while (this.tree.size < size) {
      const from = this.tree.size + 1;
      const to = Math.min(size, from + HASH_PAGE - 1);
      for (const hex of await store.readHashes(from, to)) this.tree.append(leafHash(fromHex(hex)));
      // Between pages the event loop serves appends (SQLite reads are synchronous).
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
    }
    return this.tree;
  }
}
