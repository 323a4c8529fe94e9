/**
 * The plane's ids and their one format each. The contract checks them on every request, so a
 * malformed id is refused at the door with a message that says what an id looks like, rather
 * than reaching a handler that answers "not found".
 */
import { z } from 'zod';
import { WaitReasonSchema, type WaitReason } from './waits';

/** A local peer's id: its folder name under peers/ and its `peer:<id>` principal. */
export const PeerIdSchema = z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a peer id: lowercase letters, digits and dashes, starting with a letter (at most 40)');
export type PeerId = z.infer<typeof PeerIdSchema>;

const RUN_ID = /^run-[0-9a-f]{20}$/;

/** A run's id: `run-` and 20 hex digits (80 random bits), minted by the runtime at admission. */
export const RunIdSchema = z.string().regex(RUN_ID, 'a run id: run- and 20 lowercase hex digits');
export type RunId = z.infer<typeof RunIdSchema>;

export function isRunId(value: string): boolean {
  return RUN_ID.test(value);
}

const WAIT_ID = new RegExp(`^(run-[0-9a-f]{20})/(0|[1-9][0-9]*)/(${WaitReasonSchema.options.join('|')})$`);

/**
 * A wait's id: `<runId>/<step>/<reason>`. It is deterministic, so a replay of the run reaches
 * the same id and finds the decision already journaled for it.
 */
export const WaitIdSchema = z.string().regex(WAIT_ID, 'a wait id: <runId>/<step>/<reason>');
export type WaitId = z.infer<typeof WaitIdSchema>;

export function waitIdOf(runId: string, step: number, reason: WaitReason): string {
  return `${runId}/${step}/${reason}`;
}

/** The parts of a wait id, or null when it is not one. */
export function waitIdParts(waitId: string): { runId: string; step: number; reason: WaitReason } | null {
  const match = WAIT_ID.exec(waitId);
  if (!match) return null;
  const reason = WaitReasonSchema.safeParse(match[3]);
  return reason.success ? { runId: match[1]!, step: Number(match[2]), reason: reason.data } : null;
}
