/**
 * How a governed run answers an MCP `tools/call`. The run, not the call, is the unit of truth:
 * the answer names the run (`structuredContent.runId`) in every case, so a host (or the person
 * behind it) can find it in the journal, the UI or `agentplane runs show`.
 *
 * - succeeded: the run's result, as JSON text and in `structuredContent.result`;
 * - failed, cancelled, denied, halted: `isError`, naming the run and what ended it;
 * - suspended (a ceiling reached, a halt, an effect in doubt: the waits a caller without Tasks
 *   can still meet, since it is offered only agents that never wait by their own declaration):
 *   `isError`, naming the run and saying it waits on this plane, what for and where a person
 *   decides. The run stays among the waiting runs, never reported failed or succeeded
 *   (docs/GOVERNED-RUNTIME.md: "the run stays among the waiting runs"): the error is the call's,
 *   which produced no result, not the run's;
 * - still running when the call's bound passed: the same shape, status `running`.
 *
 * This is the answer to a caller without Tasks. A caller with Tasks (the 2026-07-28 extension
 * declared on the request) is answered with a task whose id is the
 * run id instead (tasks.ts, plane-tasks.ts), and its task's result, once the run is sealed, is
 * `succeededResult` or `endedResult` below: the call's own result either way.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { RunView, Wait } from '../../../src-shared/ipc/contract';

/** One line saying what a wait asks, from its subject (never the whole request: it may be long). */
export function waitSummary(wait: Wait): string {
  const subject = wait.subject as Record<string, unknown> & { kind: string };
  switch (subject.kind) {
    case 'approval':
    case 'payment':
    case 'oversight':
    case 'provenance':
      return `${wait.reason}: ${String(subject.effect)} ${String(subject.name)}`;
    case 'budget': {
      const next = subject.next as { effect?: string; name?: string } | undefined;
      return `budget: the next effect (${next?.effect ?? '?'} ${next?.name ?? '?'}) would pass a ceiling`;
    }
    case 'input':
      return `input: ${String(subject.prompt)}`;
    case 'recovery':
      return `recovery: ${String(subject.effect)} ${String(subject.name)} is in doubt`;
    case 'halt':
      return `halt: withheld by ${String(subject.scope)}`;
    default:
      return wait.reason;
  }
}

export function succeededResult(run: RunView): CallToolResult {
  const result = run.result ?? null;
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: { runId: run.runId, status: run.status, outcome: run.outcome, result },
  };
}

export function endedResult(run: RunView): CallToolResult {
  const why = run.error ? `${run.error.code}: ${run.error.message}` : `it ended ${run.outcome ?? 'without an outcome'}`;
  return {
    isError: true,
    content: [{ type: 'text', text: `run ${run.runId} (${run.agent}) ${run.outcome ?? 'ended'}: ${why}` }],
    structuredContent: { runId: run.runId, status: run.status, outcome: run.outcome, ...(run.error ? { error: run.error } : {}) },
  };
}

/**
 * A run that has not ended within the call: waiting for a person (an error of the call: it has
 * no result to give, and a model reading it must not take the text for one), or still running
 * (not an error: the answer is on its way, at agentplane://runs/<runId>). With Tasks the call
 * answers a CreateTaskResult whose task id is the run id instead: plane-surface.ts.
 */
export function waitingResult(run: RunView, approveWith: string): CallToolResult {
  if (run.status === 'suspended' && run.pending) {
    const waitingFor = { reason: run.pending.reason, waitId: run.pending.waitId, summary: waitSummary(run.pending), since: run.pending.since };
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: `run ${run.runId} (${run.agent}) is waiting on this plane for a person (${waitingFor.summary}); approve at ${approveWith}. It stays waiting; call again with the same idempotency key or read agentplane://runs/${run.runId} to see how it ends.`,
        },
      ],
      structuredContent: { runId: run.runId, status: 'suspended', waitingFor, approveWith },
    };
  }
  return {
    content: [{ type: 'text', text: `run ${run.runId} (${run.agent}) is still running; read agentplane://runs/${run.runId} to see how it ends.` }],
    structuredContent: { runId: run.runId, status: 'running', waitingFor: null, approveWith },
  };
}

export function runResult(run: RunView, approveWith: string): CallToolResult {
  if (run.status === 'sealed') return run.outcome === 'succeeded' ? succeededResult(run) : endedResult(run);
  return waitingResult(run, approveWith);
}
