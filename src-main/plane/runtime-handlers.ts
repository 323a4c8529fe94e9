/**
 * The runtime's commands. Every front end (window, browser, CLI through the local API) acts as
 * the person at this machine, `user:local`; the transport is recorded as how the run arrived.
 */
import { mayWaitFor, systemPromptsOf } from '../runtime/agent-waits';
import type { AgentsView, CommandsOf, RunView, SpendSummary } from '../../src-shared/ipc/contract';
import { addSpend, NO_SPEND, tokensOf } from '../../src-shared/vocabulary/spend';
import { readPaymentRequest } from '../../src-shared/vocabulary/payments';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { CommandHandlers, CallContext } from './dispatch';
import { PlaneError } from '../base/plane-error';
import type { RunSummary } from '../runtime/run-history';
import type { Runtime } from '../runtime/runtime';
import { billedToParent } from '../runtime/agent-effect';

export const LOCAL_USER = 'user:local';

export function runView(history: RunSummary): RunView {
  return {
    runId: history.runId,
    agent: history.agent,
    owner: history.owner,
    chain: history.chain,
    host: history.host ?? 'plane',
    ...(history.context !== undefined ? { context: history.context } : {}),
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
    ...(history.fork ? { forkOf: { runId: history.fork.parent, step: history.fork.step } } : {}),
    ...(history.erased ? { erased: history.erased } : {}),
  };
}

const viaOf = (context: CallContext) => context.caller?.via ?? (context.transport === 'electron' ? 'ipc' : context.transport === 'web' ? 'web' : 'cli');

/**
 * Who a call acts for: the principal a protocol adapter authenticated (an MCP host: `mcp:local`,
 * `mcp:stdio`), else the person at this machine. A run started by an MCP host is that host's,
 * not the user's: its chain is `[principal]`, policy is asked about that principal, and its
 * input is labelled as coming from it.
 */
const actorOf = (context: CallContext) => context.caller?.principal ?? LOCAL_USER;

/**
 * A protocol caller (an MCP host eliciting an answer from its user) may answer the input request
 * of a run it admitted, and nothing else: approving an effect, raising a budget or resolving an
 * in-doubt effect is a person's decision at this plane, and letting the agent's own host make it
 * would turn every approval into a formality. Another caller's run reads as no such run.
 */
async function assertCallerMayAnswer(runtime: Runtime, principal: string, runId: string, waitId: string): Promise<void> {
  const history = await runtime.history(runId);
  if (history.owner !== principal) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
  if (history.pending?.waitId === waitId && history.pending.reason !== 'input') {
    throw new PlaneError(ErrorCode.Forbidden, `only a person at this plane can decide a ${history.pending.reason} wait`);
  }
}

/** Refuses a protocol caller (an MCP host, an A2A client): what follows is a person's at this plane. */
function assertAPerson(context: CallContext, what: string): void {
  if (context.caller) throw new PlaneError(ErrorCode.Forbidden, `only a person at this plane can ${what}`);
}

/** The agents a runtime runs and the agent files it could not load: `agents.list`'s answer and the `agents.changed` event's payload. */
export function agentsView(runtime: Runtime): AgentsView {
  return {
    agents: runtime.listAgents().map((a) => ({
      name: a.manifest.name,
      description: a.manifest.description,
      inputSchema: a.manifest.input,
      grants: a.manifest.grants.map((g) => ({ kind: g.kind, name: g.name, approve: g.approve })),
      budget: a.manifest.budget,
      source: a.source,
      systemPrompts: systemPromptsOf(a.manifest),
      mayWaitFor: mayWaitFor(a.manifest),
    })),
    broken: runtime.listBrokenAgents(),
  };
}

/** Every runs, approvals, recovery, halts and spend command, and the agents list (agents.reload is agent-files.ts's). */
type RuntimeCommands = 'agents.list' | CommandsOf<'runs' | 'approvals' | 'recovery' | 'halts' | 'spend'>;

export function runtimeHandlers(runtime: Runtime): Pick<CommandHandlers, RuntimeCommands> {
  return {
    'agents.list': () => agentsView(runtime),
    async 'runs.list'({ limit, agent, status, owner, host, context, activeSince, beforeSeq }) {
      if (owner !== undefined) {
        // One owner's runs through the journal's index of admissions: only the page is folded.
        const filter = { owner, ...(agent !== undefined ? { agent } : {}), ...(host !== undefined ? { host } : {}), ...(context !== undefined ? { context } : {}), ...(activeSince !== undefined ? { activeSince } : {}), ...(beforeSeq !== undefined ? { beforeSeq } : {}) };
        const listed = await runtime.listOwnedRuns(filter, limit);
        return { runs: listed.runs.filter((h) => !status || h.status === status).map(runView), total: listed.total, ...(listed.nextBeforeSeq !== null ? { nextBeforeSeq: listed.nextBeforeSeq } : {}) };
      }
      const runs = await runtime.listRunSummaries(limit);
      return { runs: runs.filter((h) => (!agent || h.agent === agent) && (!host || (h.host ?? 'plane') === host) && (!status || h.status === status)).map(runView) };
    },
    async 'runs.get'({ runId }) {
      // A view is a summary: a run's steps are read from its records (journal.records), never here.
      return runView(await runtime.summary(runId));
    },
    'runs.links': ({ runId }) => runtime.links(runId),
    async 'runs.start'({ agent, input, wait, context: runContext, sensitivity }, context) {
      const actor = actorOf(context);
      const request = { agent, input, chain: [actor], via: viaOf(context), inputProvenance: actor, ...(runContext !== undefined ? { context: runContext } : {}), ...(sensitivity !== undefined ? { inputSensitivity: sensitivity } : {}) };
      // Waiting: the run's admission commits with its local effects (Runtime.run).
      if (wait) return runView(await runtime.run(request));
      const { runId } = await runtime.start(request);
      return runView(await runtime.history(runId));
    },
    // Time travel reads and re-runs any run: a person's, at this plane, never a protocol caller's.
    async 'runs.fork'(request, context) {
      assertAPerson(context, 'fork a run');
      const { runId } = await runtime.fork(request, [actorOf(context)], viaOf(context));
      return runView(request.wait ? await runtime.settled(runId) : await runtime.summary(runId));
    },
    async 'runs.replay'(request, context) {
      assertAPerson(context, 'replay a run');
      return runtime.replay(request);
    },
    async 'runs.diff'({ a, b }, context) {
      assertAPerson(context, 'compare runs');
      return runtime.diff(a, b);
    },
    async 'runs.cancel'({ runId, reason }, context) {
      // A protocol caller (an MCP host's tasks/cancel) cancels only a run it admitted; the journal
      // names it as the one who asked.
      if (context.caller && (await runtime.summary(runId)).owner !== context.caller.principal) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
      return runView(await runtime.cancel(runId, actorOf(context), reason));
    },
    async 'approvals.list'() {
      return { waiting: (await runtime.waiting()).filter((w) => w.wait.reason !== 'recovery').map((w) => runView(w.history)) };
    },
    async 'approvals.decide'(request, context) {
      if (context.caller) await assertCallerMayAnswer(runtime, context.caller.principal, request.runId, request.waitId);
      return runView(await runtime.decide({ ...request, by: actorOf(context) }));
    },
    async 'runs.answer'({ runId, waitId, messageId, input }, context) {
      // A protocol caller's answer to its own run's question, in its own name (runtime.answerInput
      // holds the owner, wait-reason, policy and repeat rules). A person at this plane decides
      // with approvals.decide, which shows them exactly what they decide on.
      if (!context.caller) throw new PlaneError(ErrorCode.BadRequest, "runs.answer is a protocol caller's answer to its own run; a person answers with approvals.decide (agentplane approvals approve <run> --input JSON)");
      const { principal, via } = context.caller;
      const answered = await runtime.answerInput({
        runId,
        by: principal,
        messageId,
        input,
        ...(waitId !== undefined ? { waitId } : {}),
        // Policy in the door's own words: `a2a:task.continue`, `a2a:event.deliver` for an A2A caller.
        actions: { continue: `${via}:task.continue`, deliver: `${via}:event.deliver` },
      });
      return { run: runView(answered.history), repeated: answered.repeated };
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
          ...(resolution === 'fail' ? {} : { value: { kind: 'recovery', resolution, ...(result !== undefined ? { result } : {}) } }),
        }),
      );
    },
    async 'halts.list'() {
      // The halts the journal holds are known once its start-up check has read them.
      await runtime.ready();
      return { scopes: runtime.haltScopes() };
    },
    'spend.summary': ({ limit }) => spendSummary(runtime, limit),
    async 'halts.apply'({ scope, reason }) {
      return { scopes: await runtime.halt(scope, LOCAL_USER, reason) };
    },
    async 'halts.lift'({ scope }) {
      return { scopes: await runtime.liftHalt(scope, LOCAL_USER) };
    },
  };
}

/**
 * Spend folded from the runs' summaries (never kept beside the journal). Summaries, not whole
 * histories: folding the newest 1,000 runs of a 1M-record journal whole held every effect of
 * every run at once (the plane's RSS grew by 600 MB on opening Spend, bench/memory.bench.ts),
 * where a summary carries the run's peer calls and completed payments and nothing else per step.
 */
export async function spendSummary(runtime: Runtime, limit: number): Promise<SpendSummary> {
  const runs = await runtime.listRunSummaries(limit);
  const byAgent = new Map<string, SpendSummary['byAgent'][number]>();
  const byPeer = new Map<string, SpendSummary['byPeer'][number]>();
  let total = NO_SPEND;
  for (const run of runs) {
    // A child run an agent tool started is billed to its parent's agent effect as well (so the
    // parent's ceilings hold across the delegation; runtime/agent-effect.ts): the plane's total
    // counts it through the parent only. Rows by agent or peer stay each run's whole spend.
    if (!billedToParent(run)) total = addSpend(total, run.spend);
    const agentRow = byAgent.get(run.agent) ?? { key: run.agent, runs: 0, spend: NO_SPEND };
    byAgent.set(run.agent, { ...agentRow, runs: agentRow.runs + 1, spend: addSpend(agentRow.spend, run.spend) });
    // A skill run is hosted by a peer; an agent's calls to a peer are that peer's too.
    const peers = new Set<string>();
    if (run.agent.startsWith('skill:')) peers.add(run.host ?? 'peer:?');
    for (const peer of run.peersCalled) peers.add(peer);
    for (const peer of peers) {
      const row = byPeer.get(peer) ?? { key: peer, runs: 0, spend: NO_SPEND };
      byPeer.set(peer, { ...row, runs: row.runs + 1, spend: addSpend(row.spend, run.spend) });
    }
  }
  const chronological = [...runs].sort((a, b) => a.lastSeq - b.lastSeq);
  const intents = new Map<string, SpendSummary['paymentIntents'][number]>();
  const intentRow = (currency: string) => {
    const row = intents.get(currency) ?? { currency, pending: 0, pendingCount: 0, approved: 0, approvedCount: 0, moved: 0 };
    intents.set(currency, row);
    return row;
  };
  for (const run of runs) {
    // Pending: a payment wait not yet answered (it suspends before its EffectStarted).
    const waiting = run.pending?.subject;
    if (waiting && (waiting.kind === 'payment' || waiting.kind === 'approval' || waiting.kind === 'oversight' || waiting.kind === 'provenance') && waiting.effect === 'payment') {
      const request = readPaymentRequest(waiting.request);
      if (request) {
        const row = intentRow(request.currency);
        row.pending += request.amount;
        row.pendingCount += 1;
      }
    }
    // Approved: a payment effect that completed; its result says whether money moved.
    for (const payment of run.paymentsDone) {
      const request = readPaymentRequest(payment.request);
      if (!request) continue;
      const row = intentRow(request.currency);
      row.approved += request.amount;
      row.approvedCount += 1;
      const result = payment.result;
      if (typeof result === 'object' && result !== null && (result as { moved?: unknown }).moved === true) row.moved += request.amount;
    }
  }
  let running = NO_SPEND;
  const timeline = chronological.map((run) => {
    if (!billedToParent(run)) running = addSpend(running, run.spend);
    return { at: run.lastTime, tokens: tokensOf(running), costMicros: running.costMicros, effects: running.effects };
  });
  return {
    paymentIntents: [...intents.values()].sort((a, b) => a.currency.localeCompare(b.currency)),
    byAgent: [...byAgent.values()].sort((a, b) => tokensOf(b.spend) - tokensOf(a.spend)),
    byPeer: [...byPeer.values()].sort((a, b) => tokensOf(b.spend) - tokensOf(a.spend)),
    byRun: runs.map((run) => ({ key: run.runId, runs: 1, spend: run.spend, budget: run.budget })),
    timeline,
    total,
  };
}
