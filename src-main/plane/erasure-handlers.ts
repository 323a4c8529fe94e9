/**
 * `erasure.*` and `holds.*` (src-shared/protocol/erasure.ts; docs/ERASURE.md). Erasing a subject
 * destroys its data keys in the subject key store and journals who erased what, when and why
 * (SubjectErased); every payload sealed under those keys then reads as erased, and nothing in
 * the journal changes, so every hash, checkpoint and export still verifies. The record is written
 * before the keys go: an erasure the journal does not tell of cannot happen, and one that failed
 * after its record is finished by erasing again.
 *
 * A legal hold (HoldPlaced, lifted by HoldLifted) on a subject, or on a case one of the subject's
 * runs is bound to, refuses erasure by a person and by retention alike, naming the hold.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { CommandHandlers } from './dispatch';
import type { CommandsOf } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { ErasureView, HoldView, RetentionPass } from '../../src-shared/protocol/erasure';
import { PlaneError } from '../base/plane-error';
import type { Journal } from '../journal/journal';
import { periodOf, type PayloadSealer } from '../journal/payload-sealer';
import { subjectKeysPath, type KeyRow } from '../journal/subject-keys';

/** The data dir's retention setting (subject-keys.ts settings), in days. */
const RETENTION_SETTING = 'retention-days';
/** Who erases when retention does. */
export const RETENTION_BY = 'plane:retention';
const DAY_MS = 86_400_000;
/** The most CaseBound records read to find what a case hold covers. */
const CASE_BINDINGS_READ = 10_000;

function erasureOf(journal: Journal): PayloadSealer {
  try {
    return journal.erasure();
  } catch (error) {
    throw new PlaneError(ErrorCode.Conflict, (error as Error).message);
  }
}

/** The retention in days the data dir's setting names, or null. */
export function retentionDays(journal: Journal): number | null {
  const value = erasureOf(journal).keys.setting(RETENTION_SETTING);
  return value === null ? null : Number(value);
}

/** The hold that covers `subject` (on it, or on a case one of its runs is bound to), or null. */
async function holdOn(journal: Journal, sealer: PayloadSealer, subject: string): Promise<HoldView | null> {
  for (const hold of sealer.keys.holds()) {
    if (hold.target.kind === 'subject' && hold.target.id === subject) return hold;
    if (hold.target.kind !== 'case') continue;
    for (const binding of await journal.caseRecords(hold.target.id, CASE_BINDINGS_READ)) {
      for (const runId of (binding.body as { runIds?: string[] }).runIds ?? []) {
        const [first] = await journal.readRun(runId, 1, 1);
        if (first?.kind === 'RunAdmitted' && first.body.owner === subject) return hold;
      }
    }
  }
  return null;
}

const describeHold = (hold: HoldView): string =>
  `hold ${hold.holdId} on ${hold.target.kind} ${hold.target.id} (placed by ${hold.by} at ${hold.at}${hold.reason ? `: ${hold.reason}` : ''})`;

/** Journals the erasure, then destroys the keys (see the file's comment). */
async function destroy(journal: Journal, sealer: PayloadSealer, subject: string, keys: readonly KeyRow[], by: string, reason: string, retention?: number): Promise<ErasureView> {
  const body = { subject, keys: keys.map((k) => ({ key: k.key, period: k.period })), by, reason, ...(retention !== undefined ? { retention: { days: retention } } : {}) };
  const [record] = await journal.appendBatch([{ runId: null, kind: 'SubjectErased', body }]);
  sealer.destroyKeys(keys, { at: record!.time, by, reason, seq: record!.seq });
  return { subject, keys: body.keys, by, reason, at: record!.time, seq: record!.seq };
}

/** One retention pass at `nowMs`: every key whose month ended `days` ago is destroyed unless its subject is held. */
export async function applyRetention(journal: Journal, nowMs: number): Promise<RetentionPass> {
  const sealer = erasureOf(journal);
  const days = retentionDays(journal);
  if (days === null) return { days: null, erased: [], held: [] };
  // A key serves a UTC month; its payloads are all older than `days` once the month ended that long
  // ago, that is when the month is before the month of (now - days).
  const due = sealer.keys.keysBefore(periodOf(nowMs - days * DAY_MS));
  const bySubject = new Map<string, KeyRow[]>();
  for (const key of due) bySubject.set(key.subject, [...(bySubject.get(key.subject) ?? []), key]);
  const pass: RetentionPass = { days, erased: [], held: [] };
  for (const [subject, keys] of bySubject) {
    const hold = await holdOn(journal, sealer, subject);
    if (hold !== null) {
      for (const key of keys) pass.held.push({ subject, period: key.period, holdId: hold.holdId });
      continue;
    }
    pass.erased.push(await destroy(journal, sealer, subject, keys, RETENTION_BY, `retention: payloads older than ${days} days`, days));
  }
  return pass;
}

export function erasureHandlers(journal: Journal, by: string, now: () => number = Date.now, erased: () => void = () => undefined): Pick<CommandHandlers, CommandsOf<'erasure'> | CommandsOf<'holds'>> {
  const targetOf = (request: { subject?: string; caseId?: string }): HoldView['target'] => {
    if ((request.subject === undefined) === (request.caseId === undefined)) throw new PlaneError(ErrorCode.BadRequest, 'name exactly one of --subject or --case');
    return request.subject !== undefined ? { kind: 'subject', id: request.subject } : { kind: 'case', id: request.caseId! };
  };
  return {
    async 'erasure.erase'({ subject, reason }) {
      const sealer = erasureOf(journal);
      if (!sealer.keys.knowsSubject(subject)) throw new PlaneError(ErrorCode.NotFound, `no payload of subject "${subject}" is sealed in this data dir: nothing to erase (payloads are sealed only while sealing is on: \`agentplane sealing on\`, off by default)`);
      const hold = await holdOn(journal, sealer, subject);
      if (hold !== null) throw new PlaneError(ErrorCode.Conflict, `subject "${subject}" is under legal ${describeHold(hold)}: lift it first (\`agentplane holds remove\`)`);
      const keys = sealer.keys.keysOf(subject);
      if (keys.length === 0) throw new PlaneError(ErrorCode.Conflict, `subject "${subject}" was erased already: none of its data keys is left`);
      const done = await destroy(journal, sealer, subject, keys, by, reason ?? 'no reason given');
      erased();
      return done;
    },
    'erasure.settings'({ sealPayloads, retentionDays: days }) {
      const sealer = erasureOf(journal);
      if (sealPayloads !== undefined) sealer.setSealing(sealPayloads);
      if (days !== undefined) sealer.keys.setSetting(RETENTION_SETTING, days === null ? null : String(days));
      return { sealPayloads: sealer.sealing, retentionDays: retentionDays(journal) };
    },
    async 'erasure.retentionApply'() {
      const pass = await applyRetention(journal, now());
      if (pass.erased.length > 0) erased();
      return pass;
    },
    async 'holds.add'(request) {
      const target = targetOf(request);
      const sealer = erasureOf(journal);
      const holdId = `hold-${randomBytes(6).toString('hex')}`;
      const body = { holdId, target, by, ...(request.reason !== undefined ? { reason: request.reason } : {}) };
      const [record] = await journal.appendBatch([{ runId: null, kind: 'HoldPlaced', body }]);
      const hold = { ...body, at: record!.time, seq: record!.seq };
      sealer.keys.addHold(hold);
      return hold;
    },
    'holds.list'() {
      return { holds: erasureOf(journal).keys.holds() };
    },
    async 'holds.remove'(request) {
      const target = targetOf(request);
      const sealer = erasureOf(journal);
      const held = sealer.keys.holds().filter((h) => h.target.kind === target.kind && h.target.id === target.id);
      if (held.length === 0) throw new PlaneError(ErrorCode.NotFound, `no legal hold on ${target.kind} ${target.id} (see \`agentplane holds list\`)`);
      for (const hold of held) {
        await journal.appendBatch([{ runId: null, kind: 'HoldLifted', body: { holdId: hold.holdId, by, ...(request.reason !== undefined ? { reason: request.reason } : {}) } }]);
        sealer.keys.removeHold(hold.holdId);
      }
      return { removed: held };
    },
  };
}

/** How often the plane applies retention in the background: an hour (keys serve whole months, so nothing is late by more than that). */
export const RETENTION_EVERY_MS = 3_600_000;

/**
 * Applies retention now and every RETENTION_EVERY_MS while the plane runs, in a data dir that has
 * a subject key store (one that never sealed has nothing to erase, and gets no store made for
 * it). Returns the stop.
 */
export function startRetention(journal: Journal, dataDir: string, now: () => number, erased: () => void, onError: (error: unknown) => void): () => void {
  let running: Promise<unknown> = Promise.resolve();
  const tick = (): void => {
    if (!existsSync(subjectKeysPath(dataDir))) return;
    running = running
      .then(async () => {
        if ((await applyRetention(journal, now())).erased.length > 0) erased();
      })
      .catch(onError);
  };
  tick();
  const timer = setInterval(tick, RETENTION_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
