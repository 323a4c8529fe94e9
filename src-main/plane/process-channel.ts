/**
 * The message channel between a process and the plane it hosts in a child: Electron's
 * `utilityProcess` (in the desktop app) or a Node child process with an IPC channel (where
 * Electron is absent, and in tests). Both ends carry the contract's plain-JSON messages
 * (src-shared/ipc/message-transport.ts) and the host's own control messages (plane-host.ts),
 * so each end is a small fan-out: several listeners, one sender.
 *
 * Nothing here imports 'electron' (only src-main/electron may): Electron's objects are met by
 * their shape. In a utility process `process.parentPort` exists and messages arrive as
 * `{data}`; in a Node child, `process.send` exists and messages arrive as they were sent.
 */
import type { MessagePort } from '../../src-shared/ipc/message-transport';

export interface Channel {
  send(message: unknown): void;
  /** Adds a listener; returns a function that removes it. */
  onMessage(listener: (message: unknown) => void): () => void;
  /** Called once when the other end is gone (it exited, or closed the channel). */
  onClose(listener: () => void): void;
  close(): void;
}

/** The child side of a Node ChildProcess or of an Electron UtilityProcess, met by shape. */
export interface ChildLike {
  send?(message: unknown): boolean;
  postMessage?(message: unknown): void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'exit', listener: (...args: unknown[]) => void): unknown;
  off?(event: 'message', listener: (message: unknown) => void): unknown;
  kill(signal?: NodeJS.Signals | number): boolean;
}

function fanOut(send: (message: unknown) => void, close: () => void) {
  const listeners = new Set<(message: unknown) => void>();
  const closers: Array<() => void> = [];
  let closed = false;
  const channel: Channel & { deliver(message: unknown): void; ended(): void } = {
    send(message) {
      if (closed) throw new Error('the channel is closed');
      send(message);
    },
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onClose(listener) {
      if (closed) queueMicrotask(listener);
      else closers.push(listener);
    },
    close() {
      if (closed) return;
      close();
      channel.ended();
    },
    deliver(message) {
      for (const listener of [...listeners]) listener(message);
    },
    ended() {
      if (closed) return;
      closed = true;
      for (const listener of closers.splice(0)) listener();
    },
  };
  return channel;
}

/** The parent's end of a channel to a hosted child. */
export function channelToChild(child: ChildLike): Channel {
  const channel = fanOut(
    (message) => {
      if (child.postMessage) child.postMessage(message);
      else if (!child.send?.(message)) throw new Error('the plane host is not accepting messages');
    },
    () => child.kill('SIGTERM'),
  );
  child.on('message', (message) => channel.deliver(message));
  child.on('exit', () => channel.ended());
  return channel;
}

interface ParentPortLike {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown;
}

/** The child's end of the channel to whoever started it; null when it was started without one. */
export function channelToParent(): Channel | null {
  const parentPort = (process as unknown as { parentPort?: ParentPortLike }).parentPort;
  if (parentPort) {
    const channel = fanOut(
      (message) => parentPort.postMessage(message),
      () => undefined,
    );
    parentPort.on('message', (event) => channel.deliver(event.data));
    // A utility process ends with the app that forked it; there is no disconnect to watch.
    return channel;
  }
  if (typeof process.send === 'function') {
    const channel = fanOut(
      (message) => process.send!(message),
      () => process.disconnect(),
    );
    process.on('message', (message) => channel.deliver(message));
    // The parent died or closed the channel: nobody is left to serve.
    process.on('disconnect', () => channel.ended());
    return channel;
  }
  return null;
}

/** The channel as one contract MessagePort (the contract's messages are told apart by `type`). */
export function contractPort(channel: Channel): MessagePort {
  let stop: (() => void) | null = null;
  return {
    start(handlers) {
      stop = channel.onMessage((message) => handlers.message(message));
      channel.onClose(() => handlers.close());
    },
    send(message) {
      channel.send(message);
    },
    close() {
      stop?.();
    },
  };
}
