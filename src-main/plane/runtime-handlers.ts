/**
 * The runtime's commands. Every front end (window, browser, CLI through the local API) acts as
 * the person at this machine, `user:local`; the transport is recorded as how the run arrived.
 */
import type { RunView } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { CommandHandlers, CallContext } from './dispatch';
import { PlaneError } from './plane-error';
import type { RunHistory } from '../runtime/run-history';
import type { Runtime } from '../runtime/runtime';

export const LOCAL_USER = 'user:local';

export function runView(history: RunHistory): RunView {
  return {
    runId: history.runId,
    agent: history.agent,
    owner: history.owner,
    chain: history.chain,
    status: history.status,
    outcome: history.outcome ?? null,
    admittedAt: history.admittedAt,
    lastAt: history.lastTime,
    records: history.records,
    lastSeq: history.lastSeq,
    spend: history.spend,
    budget: history.budget,
    pending: history.pending,
    ...(history.result !== undefined ? { result: history.result } : {}),
    ...(history.error ? { error: history.error } : {}),
  };
}

const viaOf = (context: CallContext) => (context.transport === 'electron' ? 'ipc' : context.transport === 'web' ? 'web' : 'cli');

type RuntimeCommands =
  | 'agents.list'
  | 'runs.list'
  | 'runs.get'
  | 'runs.start'
  | 'runs.cancel'
  | 'approvals.list'
  | 'approvals.decide'
  | 'recovery.list'
  | 'recovery.resolve'
  | 'halts.list'
  | 'halts.apply'
  | 'halts.lift';

export function runtimeHandlers(runtime: Runtime): Pick<CommandHandlers, RuntimeCommands> {
  return {
    'agents.list': () => ({
      agents: runtime.listAgents().map((a) => ({
        name: a.manifest.name,
        description: a.manifest.description,
        inputSchema: a.manifest.input,
        grants: a.manifest.grants.map((g) => ({ kind: g.kind, name: g.name, approve: g.approve })),
        budget: a.manifest.budget,
        source: a.source,
      })),
    }),
    async 'runs.list'({ limit, agent, status }) {
      const runs = await runtime.listRuns(limit);
      return { runs: runs.filter((h) => (!agent || h.agent === agent) && (!status || h.status === status)).map(runView) };
    },
    async 'runs.get'({ runId }) {
      return runView(await runtime.history(runId));
    },
    async 'runs.start'({ agent, input, wait }, context) {
      const { runId } = await runtime.start({ agent, input, chain: [LOCAL_USER], via: viaOf(context), inputProvenance: LOCAL_USER });
      return runView(wait ? await runtime.settled(runId) : await runtime.history(runId));
    },
    async 'runs.cancel'({ runId, reason }) {
      return runView(await runtime.cancel(runId, LOCAL_USER, reason));
    },
    async 'approvals.list'() {
      return { waiting: (await runtime.waiting()).filter((w) => w.wait.reason !== 'recovery').map((w) => runView(w.history)) };
    },
    async 'approvals.decide'(request) {
      return runView(await runtime.decide({ ...request, by: LOCAL_USER }));
    },
    async 'recovery.list'() {
      return { waiting: (await runtime.waiting()).filter((w) => w.wait.reason === 'recovery').map((w) => runView(w.history)) };
    },
    async 'recovery.resolve'({ runId, waitId, subjectHash, resolution, result, reason }) {
      const history = await runtime.history(runId);
      if (history.pending?.reason !== 'recovery') throw new PlaneError(ErrorCode.Conflict, `run ${runId} has no effect waiting for recovery`);
      return runView(
        await runtime.decide({
          runId,
          waitId,
          subjectHash,
          by: LOCAL_USER,
          decision: resolution === 'fail' ? 'deny' : 'approve',
          ...(reason ? { reason } : {}),
          ...(resolution === 'fail' ? {} : { value: { resolution, ...(result !== undefined ? { result } : {}) } }),
        }),
      );
    },
    'halts.list': () => ({ scopes: runtime.haltScopes() }),
    async 'halts.apply'({ scope, reason }) {
      return { scopes: await runtime.halt(scope, LOCAL_USER, reason) };
    },
    async 'halts.lift'({ scope }) {
      return { scopes: await runtime.liftHalt(scope, LOCAL_USER) };
    },
  };
}
