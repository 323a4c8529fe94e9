/**
 * The journal's commands: what the UI's runs list, timelines and verification badge read.
 * Records go out with their envelope intact (hashes included) and a `known` flag, so a record
 * of a kind from a newer AgentPlane is shown raw and labelled rather than dropped.
 */
import { sealedFieldsOf, unknownVersion } from '../../src-shared/journal/records';
import type { CommandHandlers } from './dispatch';
import type { Journal } from '../journal/journal';
import { BundleError } from '../journal/bundle-error';
import { exportBundleInWorker, verifyJournalStoreInWorker } from '../journal/journal-workers';
import { peekCheckpoint } from '../journal/checkpoints';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { PlaneError } from '../base/plane-error';
import type { StoredRecord } from '../journal/journal-store';
import type { CommandsOf, RecordView } from '../../src-shared/ipc/contract';

export function recordView(record: StoredRecord): RecordView {
  const { bodyText: _bodyText, ...envelope } = record;
  // Known or not by kind and version alone: a view shows the body as written, valid or not.
  const why = unknownVersion(record.kind, record.v);
  // A sealed record opened to its payload (or to `erased`): the stored body goes with it, for the hash check.
  const stored = sealedFieldsOf(record.kind, record.v) !== null ? { stored: JSON.parse(record.bodyText) as Record<string, unknown> } : {};
  return why === null ? { ...envelope, known: true, ...stored } : { ...envelope, known: false, note: why };
}

/** Every journal command but journal.changes, which plane.ts serves (journal-changes.ts). */
type JournalCommands = Exclude<CommandsOf<'journal'>, 'journal.changes'>;

export function journalHandlers(journal: Journal): Pick<CommandHandlers, JournalCommands> {
  return {
    async 'journal.runs'({ limit }) {
      const rows = await journal.runs(limit);
      return {
        runs: rows.map((r) => ({
          runId: r.runId,
          agent: r.agent,
          firstSeq: r.firstSeq,
          lastSeq: r.lastSeq,
          records: r.records,
          startedAt: r.firstTime,
          lastAt: r.lastTime,
          lastKind: r.lastKind,
        })),
      };
    },
    async 'journal.records'({ runId, fromSeq: from, position, limit }) {
      const head = await journal.head();
      // A place in the run (the contract refuses one without a run): its seq, or nothing past its end.
      const fromSeq = position !== undefined && runId !== null ? await journal.runSeqAt(runId, position) : from;
      if (fromSeq === null) return { records: [], nextSeq: null, headSeq: head.seq };
      // One more than asked tells whether another page exists without a second query.
      const rows = runId === null ? await journal.readRange(fromSeq, null, limit + 1) : await journal.readRun(runId, fromSeq, limit + 1);
      const page = rows.slice(0, limit);
      const more = rows.length > limit;
      return { records: page.map(recordView), nextSeq: more ? rows[limit]!.seq : null, headSeq: head.seq };
    },
    /**
     * The badge's check. The running plane first signs its head, as export does, unless a
     * checkpoint of its key already covers it: the plane is the writer of these records and its
     * tree holds the hashes it committed, so a record rewritten in the database since then
     * contradicts that signature and fails here. Then the whole journal is verified from the
     * database against every checkpoint. `count` is what a signature covers; a record a
     * concurrent writer committed after the signature is reported in `unsigned`/`unsignedTail`
     * and not counted as verified. The signing happens here (the key stays on this thread); the
     * reading and checking in a journal worker, so every other request is answered meanwhile.
     */
    async 'journal.verify'() {
      if (!journal.readOnly) {
        const head = (await journal.head()).seq;
        let signed = 0;
        for (const jws of journal.checkpoints.readAll()) {
          const c = peekCheckpoint(jws);
          if (c && c.journalId === journal.journalId && c.keyId === journal.key.keyId) signed = Math.max(signed, c.treeSize);
        }
        if (head > signed) await journal.checkpoint();
      }
      return verifyJournalStoreInWorker(journal);
    },
    async 'journal.exportRun'({ runId }) {
      const dir = mkdtempSync(join(tmpdir(), 'agentplane-export-'));
      try {
        const file = join(dir, `${runId}.jsonl`);
        const result = await exportBundleInWorker(journal, { kind: 'run', runId }, file);
        return { fileName: `${runId}.jsonl`, content: readFileSync(file, 'utf8'), records: result.records, rootHash: result.rootHash };
      } catch (error) {
        if (error instanceof BundleError) throw new PlaneError(ErrorCode.NotFound, error.message);
        throw error;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
