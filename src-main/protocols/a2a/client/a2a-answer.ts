/**
 * What a remote agent's task or message says, read into the A2A effect's answer: the task's
 * state, its artifacts' parts as values, and a task that stopped without completing as the
 * Landed failure naming its state (a2a-client.ts decides when to read them).
 */
import type { A2aAnswer, A2aFollowed, A2aMessageInput } from '../../../runtime/a2a-effect';
import { EffectFailure } from '../../../runtime/run-signals';
import { isRecord } from '../../../../src-shared/plain-object';

type Json = Record<string, unknown>;

/** States a task does not leave. */
export const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
/** States a task waits in for its caller: this client does not answer them, so following ends there too. */
export const INTERRUPTED = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

/** A task's state as it says it; TASK_STATE_UNSPECIFIED when it says none. */
export function stateOf(task: Json): string {
  return isRecord(task.status) && typeof task.status.state === 'string' ? task.status.state : 'TASK_STATE_UNSPECIFIED';
}

/** One part as a value: its text, its data, or its file (url or raw) with the media type. */
function partValue(part: unknown): unknown {
  if (!isRecord(part)) return null;
  if (typeof part.text === 'string') return part.text;
  if ('data' in part) return part.data ?? null;
  if (typeof part.url === 'string') return { url: part.url, ...(typeof part.mediaType === 'string' ? { mediaType: part.mediaType } : {}) };
  if (typeof part.raw === 'string') return { raw: part.raw, ...(typeof part.mediaType === 'string' ? { mediaType: part.mediaType } : {}) };
  return null;
}

/** The message the effect sends, as one part: text stays text, anything else is data. */
export function messagePart(message: A2aMessageInput): Json {
  return typeof message === 'string' ? { text: message } : { data: message };
}

/** A task's artifacts, or a message's parts as one artifact; one value alone is the value, several are a list. */
export function answerOf(taskOrMessage: Json, card: A2aAnswer['card'], taskId?: string): A2aAnswer {
  const artifacts = (Array.isArray(taskOrMessage.artifacts) ? taskOrMessage.artifacts.filter(isRecord) : []).map((a) => ({
    artifactId: typeof a.artifactId === 'string' ? a.artifactId : '',
    ...(typeof a.name === 'string' && a.name !== '' ? { name: a.name } : {}),
    parts: Array.isArray(a.parts) ? a.parts.map(partValue) : [],
  }));
  // A message answer (no task) carries its parts directly; they read as one artifact.
  if (taskId === undefined && Array.isArray(taskOrMessage.parts)) artifacts.push({ artifactId: typeof taskOrMessage.messageId === 'string' ? taskOrMessage.messageId : '', parts: taskOrMessage.parts.map(partValue) });
  const values = artifacts.flatMap((a) => a.parts);
  return { ...(taskId !== undefined ? { taskId } : {}), artifacts, value: values.length === 1 ? values[0] : values, card };
}

/** A task that stopped: its answer when it completed, else the Landed failure naming its state. */
export function ended(task: Json, id: string): A2aFollowed {
  const state = stateOf(task);
  if (state === 'TASK_STATE_COMPLETED') {
    const { card: _card, ...answer } = answerOf(task, { verified: false }, id);
    return { ...answer, taskId: id };
  }
  if (INTERRUPTED.has(state)) {
    throw new EffectFailure('RemoteTaskNeedsInput', `remote task ${id} is ${state}${statusText(task)}; this plane's client does not answer a remote agent's questions`, 'Landed');
  }
  throw new EffectFailure('RemoteTaskFailed', `remote task ${id} ended ${state}${statusText(task)}`, 'Landed');
}

function statusText(task: Json): string {
  const message = isRecord(task.status) && isRecord(task.status.message) ? task.status.message : null;
  const texts = Array.isArray(message?.parts) ? message.parts.map(partValue).filter((v): v is string => typeof v === 'string') : [];
  return texts.length ? `: ${texts.join(' ').slice(0, 200)}` : '';
}
