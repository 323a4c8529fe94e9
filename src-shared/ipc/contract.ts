/**
 * The one IPC contract. Every command the UI (or the CLI, or a script over the web bridge)
 * can send is a name mapped to `{request, response}` zod schemas, and every event a name
 * mapped to its payload schema. Types are inferred from the schemas, never written beside
 * them. Main registers a handler for every command through `CommandHandlers` (a mapped type:
 * a missing handler is a compile error); the preload and the web client are both built by
 * iterating this object, so a command exists on every transport or on none.
 *
 * Everything here is plain JSON: no Date, Map or class instances cross a boundary. Times are
 * ISO-8601 strings, durations milliseconds.
 */
import { z } from 'zod';

const Empty = z.object({}).strict();

export const PlaneStatusSchema = z.object({
  version: z.string(),
  dataDir: z.string(),
  /** ISO-8601 instant the plane finished starting. */
  startedAt: z.string(),
  uptimeMs: z.number().int().nonnegative(),
  /** Which face is hosting this plane. */
  host: z.enum(['electron', 'headless']),
  state: z.enum(['running', 'stopping']),
});
export type PlaneStatus = z.infer<typeof PlaneStatusSchema>;

export const PeerSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['stopped', 'starting', 'running', 'stopping', 'failed']),
  address: z.string().nullable(),
});
export type PeerSummary = z.infer<typeof PeerSummarySchema>;

/** An event as it travels: `epoch` names the plane process, `seq` orders events within it. */
export const EventEnvelopeSchema = z.object({
  epoch: z.string(),
  seq: z.number().int().positive(),
  name: z.string(),
  payload: z.unknown(),
});
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;

export const commands = {
  'plane.status': { request: Empty, response: PlaneStatusSchema },
  'peers.list': { request: Empty, response: z.object({ peers: z.array(PeerSummarySchema) }) },
  /**
   * What a client that reconnects asks for: every event after `afterSeq` in `epoch`. When
   * the plane restarted (another epoch) or the events were already dropped from the replay
   * window, `reset` is true and the client re-reads state through commands instead.
   */
  'events.since': {
    request: z.object({ epoch: z.string().nullable(), afterSeq: z.number().int().nonnegative() }).strict(),
    response: z.object({
      epoch: z.string(),
      reset: z.boolean(),
      latestSeq: z.number().int().nonnegative(),
      events: z.array(EventEnvelopeSchema),
    }),
  },
} as const;

export const events = {
  /** The plane's status changed (started, stopping). */
  'plane.statusChanged': PlaneStatusSchema,
  /** The set of peers or one peer's state changed; the payload is the whole list. */
  'peers.changed': z.object({ peers: z.array(PeerSummarySchema) }),
} as const;

export type Commands = typeof commands;
export type CommandName = keyof Commands;
export type CommandRequest<K extends CommandName> = z.input<Commands[K]['request']>;
export type ParsedRequest<K extends CommandName> = z.output<Commands[K]['request']>;
export type CommandResponse<K extends CommandName> = z.output<Commands[K]['response']>;

export type Events = typeof events;
export type EventName = keyof Events;
export type EventPayload<K extends EventName> = z.output<Events[K]>;

export const commandNames = Object.keys(commands) as CommandName[];
export const eventNames = Object.keys(events) as EventName[];

export function isCommandName(name: string): name is CommandName {
  return Object.prototype.hasOwnProperty.call(commands, name);
}

export function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(events, name);
}
