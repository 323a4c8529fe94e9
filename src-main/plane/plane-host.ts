/**
 * The plane in a process of its own. In the desktop app the plane (runtime, journal, peer
 * supervisor, servers) runs in an Electron `utilityProcess`, so nothing it does (a synchronous
 * SQLite wait, a large fold) can freeze the windows; the main process owns windows and routes
 * IPC, nothing more. The host is transport-agnostic: the same code runs in a Node child process
 * over its IPC channel, which is how the split is exercised where Electron is absent.
 *
 * Over the channel (process-channel.ts) travel the contract's messages, served by
 * `serveContract` exactly as over any transport, and a few control messages of the host's own:
 *
 *   parent → host   {type: 'host.start', config}   build the plane
 *                   {type: 'host.stop'}            close it (checkpoint signed) and exit
 *   host → parent   {type: 'host.ready', status, info}   serving; `info` from the builder
 *                   {type: 'host.failed', message}       could not start; it exits
 *                   {type: 'host.stopped'}               closed cleanly; it exits
 *
 * and, when the parent seals provider keys (`config.sealKeys`: the desktop app, with
 * safeStorage available), a request of the host's and its answer:
 *
 *   host → parent   {type: 'host.seal', id, op: 'seal' | 'open', text}
 *   parent → host   {type: 'host.sealed', id, ok: true, text} | {…, ok: false, message}
 *
 * safeStorage exists only in Electron's main process, so the plane (in the utility process)
 * asks for it over the channel it already has; the key crosses it in memory, never to disk.
 *
 * A host whose parent is gone (the channel closed) closes its plane and exits: a plane with no
 * window and no one to serve must not hold the data dir.
 */
import { z } from 'zod';
import { createPlaneClient, type ContractTransport, type PlaneClient } from '../../src-shared/ipc/client';
import { PlaneStatusSchema, type PlaneStatus } from '../../src-shared/ipc/contract';
import { createMessageTransport } from '../../src-shared/ipc/message-transport';
import type { Plane } from './plane';
import { channelToChild, contractPort, type Channel, type ChildLike } from './process-channel';
import { serveContract } from './serve-contract';
import type { KeySealer } from './provider-settings';

const SealRequestSchema = z.object({ type: z.literal('host.seal'), id: z.number().int(), op: z.enum(['seal', 'open']), text: z.string() });
const SealAnswerSchema = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('host.sealed'), id: z.number().int(), ok: z.literal(true), text: z.string() }),
  z.object({ type: z.literal('host.sealed'), id: z.number().int(), ok: z.literal(false), message: z.string() }),
]);
/** A keychain that does not answer is a failure to seal, not a hung Save. */
const SEAL_TIMEOUT_MS = 10_000;

/** The host's KeySealer: each seal or open is a request to the parent over the channel. */
export function channelSealer(channel: Channel): KeySealer {
  let next = 0;
  const ask = (op: 'seal' | 'open', text: string) =>
    new Promise<string>((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`the desktop app did not ${op} the key within ${SEAL_TIMEOUT_MS / 1000} s`));
      }, SEAL_TIMEOUT_MS);
      const stop = channel.onMessage((raw) => {
        const answer = SealAnswerSchema.safeParse(raw);
        if (!answer.success || answer.data.id !== id) return;
        clearTimeout(timer);
        stop();
        if (answer.data.ok) resolve(answer.data.text);
        else reject(new Error(answer.data.message));
      });
      channel.send({ type: 'host.seal', id, op, text });
    });
  return { seal: (plain) => ask('seal', plain), open: (sealed) => ask('open', sealed) };
}

/** The parent's side: answers the host's seal requests with `sealer` (safeStorage in the desktop app). */
export function answerSealRequests(channel: Channel, sealer: KeySealer): void {
  channel.onMessage((raw) => {
    const request = SealRequestSchema.safeParse(raw);
    if (!request.success) return;
    const { id, op, text } = request.data;
    const send = (answer: z.infer<typeof SealAnswerSchema>) => {
      try {
        channel.send(answer);
      } catch {
        // The host is gone; nobody waits for the answer.
      }
    };
    (op === 'seal' ? sealer.seal(text) : sealer.open(text)).then(
      (out) => send({ type: 'host.sealed', id, ok: true, text: out }),
      // Only the error's message: it is about the keychain, and never holds the text.
      (error: unknown) => send({ type: 'host.sealed', id, ok: false, message: error instanceof Error ? error.message : 'the keychain refused' }),
    );
  });
}

export const HostConfigSchema = z.object({
  dataDir: z.string(),
  version: z.string(),
  host: PlaneStatusSchema.shape.host,
  demoPeers: z.boolean(),
  /** The parent answers `host.seal` (provider keys sealed with the OS keychain); absent: the 0600 file alone. */
  sealKeys: z.boolean().optional(),
});
export type HostConfig = z.infer<typeof HostConfigSchema>;

const ToHostSchema = z.discriminatedUnion('type', [z.object({ type: z.literal('host.start'), config: HostConfigSchema }), z.object({ type: z.literal('host.stop') })]);

const FromHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('host.ready'), status: PlaneStatusSchema, info: z.unknown() }),
  z.object({ type: z.literal('host.failed'), message: z.string() }),
  z.object({ type: z.literal('host.stopped') }),
]);

export interface HostedPlane {
  plane: Plane;
  /** What the parent learns once the plane serves (e.g. the local API's URL). */
  info: unknown;
  /** Closes everything the builder started, the plane last. */
  close(): Promise<void>;
}

/** The child's side: waits for `host.start`, builds the plane with `build`, serves until stopped. */
export function hostPlane(channel: Channel, build: (config: HostConfig) => Promise<HostedPlane>, exit: (code: number) => void = (code) => process.exit(code)): void {
  let hosted: Promise<HostedPlane | null> | null = null;
  let stopping: Promise<void> | null = null;

  const send = (message: z.infer<typeof FromHostSchema>) => {
    try {
      channel.send(message);
    } catch {
      // The parent is gone; closing goes on regardless.
    }
  };

  const stop = () => {
    stopping ??= (async () => {
      let code = 0;
      try {
        const current = await hosted;
        await current?.close();
        send({ type: 'host.stopped' });
      } catch {
        code = 1;
      }
      exit(code);
    })();
    return stopping;
  };

  channel.onMessage((raw) => {
    const parsed = ToHostSchema.safeParse(raw);
    if (!parsed.success) return;
    if (parsed.data.type === 'host.stop') {
      void stop();
      return;
    }
    if (hosted) return;
    const config = parsed.data.config;
    hosted = build(config).then(
      (current) => {
        serveContract(contractPort(channel), current.plane);
        send({ type: 'host.ready', status: current.plane.status(), info: current.info });
        return current;
      },
      (error: unknown) => {
        send({ type: 'host.failed', message: error instanceof Error ? error.message : String(error) });
        exit(1);
        return null;
      },
    );
  });
  channel.onClose(() => void stop());
}

export interface PlaneHostHandle {
  status: PlaneStatus;
  info: unknown;
  /** The contract to the hosted plane, raw (for routing a renderer's calls as they are). */
  transport: ContractTransport;
  client: PlaneClient;
  /** Asks the host to close its plane; resolves when the process has exited. */
  stop(timeoutMs?: number): Promise<void>;
}

/** The parent's side: starts the hosted plane in `child` and resolves once it serves. */
export function startPlaneHost(child: ChildLike, config: HostConfig, timeoutMs = 60_000, sealer?: KeySealer): Promise<PlaneHostHandle> {
  const channel = channelToChild(child);
  if (sealer) answerSealRequests(channel, sealer);
  const exited = new Promise<void>((resolve) => channel.onClose(resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the plane host did not start within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const unlisten = channel.onMessage((raw) => {
      const parsed = FromHostSchema.safeParse(raw);
      if (!parsed.success) return;
      if (parsed.data.type === 'host.failed') {
        clearTimeout(timer);
        unlisten();
        reject(new Error(parsed.data.message));
      } else if (parsed.data.type === 'host.ready') {
        clearTimeout(timer);
        unlisten();
        const transport = createMessageTransport(() => contractPort(channel));
        resolve({
          status: parsed.data.status,
          info: parsed.data.info,
          transport,
          client: createPlaneClient(transport),
          async stop(stopMs = 15_000) {
            try {
              channel.send({ type: 'host.stop' });
            } catch {
              return; // already gone
            }
            const late = setTimeout(() => child.kill('SIGKILL'), stopMs);
            await exited;
            clearTimeout(late);
          },
        });
      }
    });
    channel.onClose(() => {
      clearTimeout(timer);
      reject(new Error('the plane host exited before it was ready'));
    });
    channel.send({ type: 'host.start', config });
  });
}
