/**
 * The host closing our stdin means "no more requests", not "drop the ones in flight".
 * A host may write its requests and close its end at once (a script piping a file in, a
 * one-shot host), then read stdout until we exit; the SDK's stdio transport closes itself at the
 * EOF and aborts what is still running, so such a host got nothing back. Both ends of
 * `agentplane mcp --stdio` (mcp-stdio.ts, this process being the plane; stdio-relay.ts, relaying
 * to a running plane) therefore put this between the host's pipes and the SDK's transport:
 *
 * - stdin: the host's bytes go to the transport unchanged; the EOF is held back. Every request
 *   read (a message with a method and an id) is remembered until its answer goes out.
 * - stdout: every message the transport writes goes to the host; an answer (an id, no method)
 *   settles its request.
 * - Once the host's stdin has ended and every request read before it is answered, `drained`
 *   resolves: the caller then closes its side and calls `release()`, which ends the stdin the
 *   transport reads (its own signal to close).
 * - Bounded: a request still unanswered `drainMs` after the EOF is answered here with a JSON-RPC
 *   error naming the deadline, an answer the server gives for it later is dropped (a host must
 *   never see two answers for one id), and `drained` resolves anyway. The default deadline,
 *   STDIO_DRAIN_MS, is the plane surface's longest legitimate wait (a tools/call waits up to
 *   DEFAULT_SETTLE_MS for its run, then answers `running`) plus 5 s for that answer to travel.
 * - `subscriptions/listen` (2026-07-28) is a stream, not a call: it is answered when the
 *   connection closes, so it is not waited for.
 * - The host's stdout failing (it stopped reading: EPIPE) drains at once: nobody reads answers.
 *
 * Messages are split on newlines and parsed only to read their method and id; the bytes each
 * way are passed on as they came (one line per message, as the stdio binding frames them).
 */
import { StringDecoder } from 'node:string_decoder';
import { PassThrough, Writable, type Readable } from 'node:stream';
import type { Logger } from '../../base/logger';
import { errorFields } from '../../base/logger';
import { DEFAULT_SETTLE_MS } from './plane-surface';

/** How long after the host's EOF unanswered requests are waited for (ms). */
export const STDIO_DRAIN_MS = DEFAULT_SETTLE_MS + 5_000;

const INTERNAL_ERROR = -32603;
/** Past this a line is not parsed (the SDK's own read buffer refuses a message this long). */
const MAX_LINE_CHARS = 10 * 1024 * 1024;
/** Requests that are streams answered only when the connection closes: never waited for. */
const STREAMS = new Set(['subscriptions/listen']);

export interface StdioDrainOptions {
  drainMs?: number;
  logger: Logger;
}

export interface StdioDrain {
  /** What the SDK transport reads: the host's stdin, its EOF held back until release(). */
  stdin: Readable;
  /** What the SDK transport writes: the host's stdout, answers watched. */
  stdout: Writable;
  /** The host ended stdin and every request read before was answered (or given up on). */
  drained: Promise<void>;
  /** Ends `stdin` and stops reading the host's stdin; called once the caller has closed its side. */
  release(): void;
}

type Id = string | number;
interface Seen {
  id?: unknown;
  method?: unknown;
}

function isId(value: unknown): value is Id {
  return typeof value === 'string' || typeof value === 'number';
}

/** Each complete line of `text` after `carry`, parsed when it is JSON (null otherwise), and the incomplete tail. */
function splitLines(carry: string, text: string): { lines: Array<{ raw: string; parsed: Seen[] }>; rest: string } {
  const parts = (carry + text).split('\n');
  const rest = parts.pop()!;
  return {
    lines: parts.map((raw) => {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        return { raw, parsed: [] };
      }
      const messages = Array.isArray(value) ? value : [value];
      return { raw, parsed: messages.filter((m): m is Seen => typeof m === 'object' && m !== null) };
    }),
    rest,
  };
}

export function drainingStdio(host: { stdin: Readable; stdout: Writable }, options: StdioDrainOptions): StdioDrain {
  const drainMs = options.drainMs ?? STDIO_DRAIN_MS;
  const pending = new Set<Id>();
  const givenUp = new Set<Id>();
  const inner = new PassThrough();
  let hostEnded = false;
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  let resolveDrained!: () => void;
  const drained = new Promise<void>((resolve) => (resolveDrained = resolve));

  const finish = () => {
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    resolveDrained();
  };
  const settleIfDone = () => {
    if (hostEnded && pending.size === 0) finish();
  };

  let inCarry = '';
  let skipping = false;
  const decoder = new StringDecoder('utf8');
  const onData = (chunk: Buffer | string) => {
    let text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    if (skipping) {
      // The rest of a line too long to track: the transport refuses it anyway.
      const newline = text.indexOf('\n');
      text = newline < 0 ? '' : text.slice(newline + 1);
      skipping = newline < 0;
    }
    const { lines, rest } = splitLines(inCarry, text);
    inCarry = rest.length > MAX_LINE_CHARS ? '' : rest;
    if (rest.length > MAX_LINE_CHARS) skipping = true;
    for (const line of lines) {
      for (const message of line.parsed) {
        if (typeof message.method === 'string' && isId(message.id) && !STREAMS.has(message.method)) pending.add(message.id);
      }
    }
    // Remembered before the transport sees it, so its answer can never come first.
    if (!inner.write(chunk)) {
      host.stdin.pause();
      inner.once('drain', () => host.stdin.resume());
    }
  };
  const onEnd = () => {
    if (hostEnded) return;
    hostEnded = true;
    if (pending.size === 0) return finish();
    options.logger.log('info', 'mcp stdio: stdin closed; answering the requests read before it', { pending: pending.size, drainMs });
    timer = setTimeout(() => {
      // The deadline: whatever has not answered is answered here, once, and the connection ends.
      for (const id of pending) {
        givenUp.add(id);
        const error = { jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: `agentplane: no answer within ${drainMs} ms of stdin closing; the connection is closing` } };
        host.stdout.write(`${JSON.stringify(error)}\n`);
      }
      options.logger.log('warn', 'mcp stdio: requests unanswered at the drain deadline were answered with an error', { unanswered: pending.size, drainMs });
      pending.clear();
      finish();
    }, drainMs);
  };
  host.stdin.on('data', onData);
  host.stdin.once('end', onEnd);
  host.stdin.once('close', onEnd);
  host.stdin.once('error', (error: Error) => {
    options.logger.log('warn', 'mcp stdio: stdin failed', errorFields(error));
    onEnd();
  });
  // The host stopped reading: nobody will read an answer. Kept attached after the end, as the
  // SDK's transport keeps its own: a late EPIPE on a stream with no listener would crash us.
  host.stdout.on('error', (error: Error) => {
    if (!finished) options.logger.log('warn', 'mcp stdio: stdout failed; closing', errorFields(error));
    pending.clear();
    hostEnded = true;
    finish();
  });

  let outCarry = '';
  const stdout = new Writable({
    // The transport writes one whole message (a string) per write: kept a string, not re-encoded.
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, callback) {
      const { lines, rest } = splitLines(outCarry, typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      outCarry = rest;
      let text = '';
      for (const line of lines) {
        const answers = line.parsed.filter((m) => m.method === undefined && isId(m.id));
        // An answer given after the deadline answered its request: dropped, never a second one.
        if (answers.length > 0 && answers.every((m) => givenUp.has(m.id as Id))) continue;
        for (const m of answers) pending.delete(m.id as Id);
        text += `${line.raw}\n`;
      }
      if (text === '' || host.stdout.write(text)) callback();
      else host.stdout.once('drain', () => callback());
      settleIfDone();
    },
  });

  return {
    stdin: inner,
    stdout,
    drained,
    release() {
      host.stdin.off('data', onData);
      host.stdin.pause();
      finish();
      inner.end();
    },
  };
}
