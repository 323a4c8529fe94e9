/**
 * `cases.*` and `audit.runs` (src-shared/protocol/acp/cases.ts). A case binding is a journaled
 * CaseBound record, with no run of its own: the observed runs it names were sealed as observed
 * and stay as they were. The session is found by its ACP session id through the index of
 * tap/started by session id, one read (JournalStore.sessionRuns); a case's bindings through the
 * index of CaseBound by case id.
 *
 * The audit answers what the plane admitted and what it only watched: runs it admitted are
 * counted, and every observed run (an ACP session; nothing here admitted it, so nothing the
 * policy says covered what it did) is listed as `unadmitted`, with the cases it is bound to.
 */
import type { CommandHandlers } from './dispatch';
import type { CommandsOf } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { JournalRecord } from '../../src-shared/journal/records';
import { UNADMITTED, type CaseBinding, type CaseRow } from '../../src-shared/protocol/acp/cases';
import { PlaneError } from '../base/plane-error';
import type { Journal } from '../journal/journal';

/** The most bindings one answer reads. */
const BINDINGS_READ = 10_000;

function bindingOf(record: JournalRecord): CaseBinding {
  const b = record.body as { caseId: string; sessionId: string; runIds: string[]; by: string; note?: string };
  return { caseId: b.caseId, sessionId: b.sessionId, runIds: b.runIds, by: b.by, ...(b.note !== undefined ? { note: b.note } : {}), seq: record.seq, at: record.time };
}

export function caseHandlers(journal: Journal, by: string): Pick<CommandHandlers, CommandsOf<'cases'> | CommandsOf<'audit'>> {
  return {
    async 'cases.bind'({ caseId, sessionId, note }) {
      const runs = await journal.sessionRuns(sessionId);
      if (runs.length === 0) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session has the session id "${sessionId}" (see \`agentplane acp sessions\`)`);
      const held = (await journal.caseRecords(caseId, BINDINGS_READ)).map(bindingOf);
      if (held.some((b) => b.sessionId === sessionId)) throw new PlaneError(ErrorCode.Conflict, `session "${sessionId}" is already bound to case ${caseId}`);
      const body = { caseId, sessionId, runIds: runs.map((r) => r.runId), by, ...(note !== undefined ? { note } : {}) };
      const [written] = await journal.appendBatch([{ runId: null, kind: 'CaseBound', body }]);
      return bindingOf(written!);
    },
    async 'cases.list'({ limit }) {
      const rows = new Map<string, CaseRow & { sessionIds: Set<string> }>();
      for (const binding of (await journal.caseRecords(null, BINDINGS_READ)).map(bindingOf)) {
        const row = rows.get(binding.caseId) ?? { caseId: binding.caseId, sessions: 0, bindings: 0, lastSeq: binding.seq, lastAt: binding.at, sessionIds: new Set<string>() };
        row.bindings += 1;
        row.sessionIds.add(binding.sessionId);
        row.sessions = row.sessionIds.size;
        rows.set(binding.caseId, row);
      }
      // Read newest first, so each row's first binding seen is its last.
      return { cases: [...rows.values()].slice(0, limit).map(({ sessionIds: _s, ...row }) => row) };
    },
    async 'cases.show'({ caseId }) {
      const bindings = (await journal.caseRecords(caseId, BINDINGS_READ)).map(bindingOf).reverse();
      if (bindings.length === 0) throw new PlaneError(ErrorCode.NotFound, `no case ${caseId}: bind a session to it with \`agentplane cases bind ${caseId} --session <sessionId>\``);
      return { caseId, bindings };
    },
    async 'audit.runs'({ limit }) {
      const runs = await journal.runs(limit);
      const admitted = runs.filter((r) => r.firstKind === 'RunAdmitted');
      const casesOf = new Map<string, Set<string>>();
      for (const binding of (await journal.caseRecords(null, BINDINGS_READ)).map(bindingOf)) {
        for (const runId of binding.runIds) casesOf.set(runId, (casesOf.get(runId) ?? new Set()).add(binding.caseId));
      }
      const unadmitted = (await journal.observedRuns(limit)).map((r) => ({
        runId: r.runId,
        sessionId: r.sessionId,
        admission: UNADMITTED,
        sealed: r.lastKind === 'RunSealed',
        records: r.records,
        firstSeq: r.firstSeq,
        lastSeq: r.lastSeq,
        cases: [...(casesOf.get(r.runId) ?? [])].sort(),
      }));
      return { admitted: { runs: admitted.length, sealed: admitted.filter((r) => r.lastKind === 'RunSealed').length }, unadmitted, limit };
    },
  };
}
