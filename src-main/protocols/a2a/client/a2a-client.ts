/**
 * The plane's A2A 1.0 client: implements the runtime's `A2aCaller` (runtime/a2a-effect.ts) over
 * undici, through the dispatcher it is GIVEN (the plane passes netguard's, which judges every
 * address at connect, so a card, a redirect or a DNS answer cannot point a call at the user's
 * own network). Both legs dereference a URL somebody else influenced: the card URL (discovery)
 * and the interface URL the card advertised (the call); both go through that one dispatcher.
 *
 * One call:
 * 1. fetch the card (GET, `A2A-Version: 1.0`, redirects refused naming the target, the answer
 *    read under CARD_MAX_BYTES: a timeout says how long the far side may take, nothing about
 *    how much it may send);
 * 2. verify it where signed, and pin its key per origin on first use (a2a-pins.ts); a wrongly
 *    signed card, a changed key, or an unsigned card from a pinned origin is refused. An
 *    unsigned card from an origin never pinned is accepted and the answer says `verified:
 *    false` (most cards in the wild are unsigned; refusing them all would make the client
 *    unused), unless the grant says `signed: true` (`requireSigned` on the request): then
 *    verification is mandatory and an unsigned card is refused before anything is sent, since
 *    a client that verifies only when a signature is present is one an attacker downgrades by
 *    stripping it;
 * 3. choose the first JSONRPC interface at protocol version 1.0 (card order is the publisher's
 *    preference; matching the binding alone could pick an endpoint speaking a protocol this
 *    client does not), echoing its tenant when it has one; an interface on another origin than
 *    the card's is refused (A2aInterfaceOffOrigin, nothing sent): the grant names the card's
 *    origin only, and a card cannot widen it;
 * 4. the run's hop check (a halt placed meanwhile stops it), then SendMessage with returnImmediately,
 *    the capability in message.metadata.skill, the caller-context extension declared
 *    (a2a-caller-context.ts); `send` ends here, answering the accepted task's id and its
 *    interface (the run journals them: the send effect's result) unless the answer came at once;
 * 5. `follow` the task by its id and interface alone (so a restarted plane re-attaches) until it
 *    ends: SubscribeToTask (SSE) when the card says streaming, opened again when it drops or
 *    goes quiet (it is resumable), else GetTask polling with backoff, bounded overall by
 *    followMaxMs rather than the per-request deadline; then one GetTask for the final artifacts;
 * 6. the run's cancel (the signal) sends CancelTask, best effort, and fails RemoteTaskCancelled;
 *    the client closing (the plane stopping) parks the follow (RunParked) and writes nothing.
 *
 * Failure dispositions (see a2a-effect.ts for why): anything before the SendMessage left, and a
 * clean JSON-RPC refusal of it, is DidNotHappen, and so is a remote plane's marked admission
 * refusal (-32029 quota, -32030 halted, -32031 draining, each with its ErrorInfo in the
 * agentplane.io domain; a bare -32029 from a foreign server is an unknown fault). A quota
 * refusal is the one that says "wait": the same message is sent again after a bounded backoff
 * with jitter (`busy`: by default 4 more times, 0.5 s doubling to 4 s, so about 8 s in all), since
 * the caller's quota frees as its other tasks there end; only when every attempt is refused does
 * the send fail A2aRemoteBusy, saying how many. Halted (stop) and draining (go elsewhere) are
 * never sent again. A connection lost after the send, a deadline,
 * an unparseable answer, -32603 and -32006 (both can follow work the peer began) are InDoubt.
 * Secrets: this client sends no credentials yet (no security scheme is supported); nothing of a
 * request's headers reaches an error message.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { FailureCode } from '../../../../src-shared/vocabulary/failures';
import { undici } from '../../../net/undici';
import type { A2aAccepted, A2aAnswer, A2aCaller, A2aSendRequest } from '../../../runtime/a2a-effect';
import { RunParked } from '../../../runtime/agent-effect';
import type { EffectAt, OutsideHop } from '../../../runtime/run-context';
import { EffectFailure } from '../../../runtime/run-signals';
import type { JWK } from 'jose';
import { verifyAgentCard, type SignableCard } from '../card-signature';
import { NETGUARD_REFUSED, NetguardRefusal } from '../../../net/netguard';
import { ResponseTooLarge, SseParser, type SseEvent } from '../../../net/sse';
import { isRecord } from '../../../../src-shared/plain-object';
import { INTERRUPTED, TERMINAL, answerOf, ended, messagePart, stateOf } from './a2a-answer';
import { A2aPins } from './a2a-pins';
import { remoteErrorText } from './a2a-remote-error';
import { callerContextOf, EXTENSIONS_HEADER } from './a2a-caller-context';
import { planeRefusalOf, type PlaneRefusal } from '../a2a-wire';

export const A2A_VERSION = '1.0';
/** A discovered card is metadata: small. */
export const CARD_MAX_BYTES = 256 * 1024;
/** One JSON-RPC answer, or one SSE event. */
export const ANSWER_MAX_BYTES = 4 * 1024 * 1024;
const REQUEST_DEADLINE_MS = 30_000;
/** How long a followed remote task may take, overall, before the effect is left in doubt. */
const FOLLOW_MAX_MS = 6 * 60 * 60_000;
/** A subscription silent this long is opened again (a half-open connection never errors). */
const STREAM_IDLE_MS = 60_000;
/** Subscriptions in a row that died young before following falls back to polling. */
const MAX_SHORT_SUBSCRIPTIONS = 5;

/**
 * Verifies a signed card: with `pinned`, only a signature by that key counts. The default is
 * card-signature.ts `verifyAgentCard` (Ed25519 JWS over the RFC 8785 form); `reason` names why.
 */
export type CardVerification = { ok: true; keyId: string; jwk: Record<string, unknown> } | { ok: false; reason: string; keyMismatch?: boolean };
export type CardVerifier = (card: Record<string, unknown>, pinned?: Record<string, unknown>) => Promise<CardVerification>;

const planeVerifier: CardVerifier = async (card, pinned) => {
  const result = await verifyAgentCard(card as SignableCard, pinned as JWK | undefined);
  return result.ok ? { ok: true, keyId: result.keyId, jwk: result.jwk as Record<string, unknown> } : { ok: false, reason: `${result.reason}: ${result.detail}`, keyMismatch: result.reason === 'key-mismatch' };
};

export interface A2aClientOptions {
  dataDir: string;
  /** Every request goes through it: the plane passes netguard's. */
  dispatcher: Dispatcher;
  /** Default: card-signature.ts verifyAgentCard. */
  verifyCard?: CardVerifier;
  cardMaxBytes?: number;
  answerMaxBytes?: number;
  /** Bounds one request (its headers, for a subscription); default 30 s. */
  requestDeadlineMs?: number;
  /** Bounds following one remote task by subscription or polling; default 6 h. */
  followMaxMs?: number;
  /** A subscription with no event for this long is opened again; default 60 s. */
  streamIdleMs?: number;
  /** GetTask polling: the first wait and the most it grows to, ms. */
  poll?: { initialMs: number; maxMs: number };
  /** A remote plane's quota refusal: how many times the send is tried again, and the backoff (ms). */
  busy?: { retries: number; initialMs: number; maxMs: number };
}

export interface A2aClient extends A2aCaller {
  readonly pins: A2aPins;
  /** A2aCaller's send; without a hop (a call from outside a run) no halt is checked. */
  send(request: A2aSendRequest, at: EffectAt, hop?: OutsideHop): Promise<A2aAnswer | A2aAccepted>;
  /** send, then follow the accepted task: one call from outside a run (a run uses the two as two effects). */
  call(request: A2aSendRequest, at: EffectAt, signal: AbortSignal): Promise<A2aAnswer>;
  /** Aborts every follow in flight: each is parked (RunParked), its remote task goes on, and the next plane follows it again. */
  close(): void;
}

/** JSON-RPC codes that cannot follow work the peer began: a clean refusal. */
const CLEAN_REFUSALS = new Set([-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32007, -32008, -32009]);
/** A remote plane's admission refusals: wait and retry, stop, go elsewhere (each DidNotHappen). */
const REFUSAL_FAILURES: Record<PlaneRefusal, FailureCode> = { quota: 'A2aRemoteBusy', halted: 'A2aRemoteHalted', draining: 'A2aRemoteDraining' };
/** Errors raised before a request's bytes can have left: the connection never opened. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL', 'ERR_TLS_CERT_ALTNAME_INVALID', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);

type Json = Record<string, unknown>;

/** A refusal by netguard (never retried: the address will not change its nature) or a connection that never opened. */
function neverConnected(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  if (error instanceof NetguardRefusal || (typeof e?.code === 'string' && (CONNECT_CODES.has(e.code) || e.code === NETGUARD_REFUSED))) return true;
  return e?.cause !== undefined && e.cause !== error && neverConnected(e.cause);
}

function describe(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown; cause?: { message?: unknown } };
  const own = typeof e?.message === 'string' ? e.message : String(error);
  const cause = typeof e?.cause?.message === 'string' && e.cause.message !== own ? ` (${e.cause.message})` : '';
  return `${own}${cause}`.slice(0, 300);
}

/** Drops a body we will not read; its late 'aborted' error has nobody to reach. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Reads a body under a cap; over it, the stream is destroyed and the failure names the cap. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > max) {
      discard(body);
      throw new A2aWireError('A2aAnswerTooLarge', `${what} is larger than ${max} bytes; refused`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A refusal with a code, before deciding the disposition (which depends on the phase). */
class A2aWireError extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly rpcCode?: number,
    /** The remote's JSON-RPC error object as it came, for reading its ErrorInfo. */
    readonly rpcError?: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface Endpoint {
  url: string;
  tenant?: string;
  streaming: boolean;
}

export function createA2aClient(options: A2aClientOptions): A2aClient {
  const pins = new A2aPins(options.dataDir);
  const cardMax = options.cardMaxBytes ?? CARD_MAX_BYTES;
  const answerMax = options.answerMaxBytes ?? ANSWER_MAX_BYTES;
  const deadline = options.requestDeadlineMs ?? REQUEST_DEADLINE_MS;
  const followMax = options.followMaxMs ?? FOLLOW_MAX_MS;
  const streamIdle = options.streamIdleMs ?? STREAM_IDLE_MS;
  const poll = options.poll ?? { initialMs: 200, maxMs: 2_000 };
  const busy = options.busy ?? { retries: 4, initialMs: 500, maxMs: 4_000 };
  const closing = new AbortController();
  const verifyCard = options.verifyCard ?? planeVerifier;

  /** One HTTP exchange through the given dispatcher: no redirect followed, a deadline, a cap. */
  async function exchange(url: string, init: { method: 'GET' | 'POST'; body?: string; accept: string; signal?: AbortSignal; headers?: Record<string, string> }): Promise<Dispatcher.ResponseData> {
    // undici is loaded first (net/undici.ts: on the first request): loading it is the plane's
    // own cost, and must not eat into the time the far side is given.
    const { request } = undici();
    const signals = [AbortSignal.timeout(deadline), closing.signal, ...(init.signal ? [init.signal] : [])];
    const response = await request(url, {
      method: init.method,
      dispatcher: options.dispatcher,
      headers: { ...init.headers, 'a2a-version': A2A_VERSION, accept: init.accept, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.any(signals),
      headersTimeout: deadline,
      bodyTimeout: deadline,
    });
    if (response.statusCode >= 300 && response.statusCode < 400) {
      discard(response.body);
      // An allowed host must not hand the decision to a third one.
      const location = response.headers.location;
      throw new A2aWireError('A2aRedirectRefused', `${url} answered ${response.statusCode} redirecting to ${typeof location === 'string' ? location : '(no location)'}; redirects are not followed`);
    }
    return response;
  }

  async function fetchCard(cardUrl: string, requireSigned: boolean): Promise<{ card: Json; verified: A2aAnswer['card'] }> {
    let response: Dispatcher.ResponseData;
    try {
      response = await exchange(cardUrl, { method: 'GET', accept: 'application/json' });
    } catch (error) {
      if (error instanceof A2aWireError) throw new EffectFailure(error.code, `the card at ${cardUrl}: ${error.message}`, 'DidNotHappen');
      throw new EffectFailure('A2aCardUnreachable', `the card at ${cardUrl} could not be fetched: ${describe(error)}`, 'DidNotHappen');
    }
    let text: string;
    try {
      if (response.statusCode !== 200) {
        discard(response.body);
        throw new A2aWireError('A2aCardUnavailable', `answered HTTP ${response.statusCode}`);
      }
      text = await readCapped(response.body, cardMax, 'the card');
    } catch (error) {
      throw new EffectFailure(error instanceof A2aWireError ? error.code : 'A2aCardUnreachable', `the card at ${cardUrl}: ${describe(error)}`, 'DidNotHappen');
    }
    let card: unknown;
    try {
      card = JSON.parse(text);
    } catch {
      throw new EffectFailure('A2aCardInvalid', `the card at ${cardUrl} is not JSON`, 'DidNotHappen');
    }
    if (!isRecord(card)) throw new EffectFailure('A2aCardInvalid', `the card at ${cardUrl} is not a JSON object`, 'DidNotHappen');
    // The card's name and description travel in the effect's result (a2a.remotes shows them);
    // shortened, since a card is somebody else's text and the journal keeps it for good.
    const said = (value: unknown, max: number) => (typeof value === 'string' && value.trim() !== '' ? { text: value.trim().slice(0, max) } : null);
    const name = said(card.name, 200);
    const description = said(card.description, 500);
    return { card, verified: { ...(await judgeSignature(cardUrl, card, requireSigned)), ...(name ? { name: name.text } : {}), ...(description ? { description: description.text } : {}) } };
  }

  async function judgeSignature(cardUrl: string, card: Json, requireSigned: boolean): Promise<A2aAnswer['card']> {
    const origin = new URL(cardUrl).origin;
    const signed = Array.isArray(card.signatures) && card.signatures.length > 0;
    let pinned;
    try {
      pinned = pins.pinOf(origin);
    } catch (error) {
      throw new EffectFailure('A2aPinsUnreadable', (error as Error).message, 'DidNotHappen');
    }
    if (!signed) {
      if (requireSigned) throw new EffectFailure('A2aCardUnsigned', `the card at ${cardUrl} is unsigned, and the grant a2a:${cardUrl} requires a signed card (signed: true); refused before anything was sent`, 'DidNotHappen');
      if (pinned) throw new EffectFailure('A2aCardUnsigned', `the card at ${cardUrl} is unsigned, but ${origin} is pinned to key ${pinned.keyId}; a stripped signature is refused`, 'DidNotHappen');
      return { verified: false };
    }
    // A pinned origin is verified against its pin first: a card carrying a signature by the
    // pinned key (say, beside a new one during a rotation) is the same agent.
    if (pinned) {
      const byPin = await verifyCard(card, pinned.jwk);
      if (byPin.ok) return { verified: true, keyId: byPin.keyId };
      if (!byPin.keyMismatch) throw new EffectFailure('A2aCardSignatureInvalid', `the card at ${cardUrl} is signed, but its signature does not verify: ${byPin.reason}`, 'DidNotHappen');
    }
    const result = await verifyCard(card);
    if (!result.ok) throw new EffectFailure('A2aCardSignatureInvalid', `the card at ${cardUrl} is signed, but its signature does not verify: ${result.reason}`, 'DidNotHappen');
    const verdict = pins.judge(origin, result.keyId, result.jwk);
    if (verdict.kind === 'changed') {
      throw new EffectFailure(
        'A2aPinnedKeyChanged',
        `the card at ${cardUrl} is signed with key ${result.keyId}, but ${origin} is pinned to key ${verdict.pinned.keyId}; refused until a person accepts the new key (agentplane a2a pins accept ${origin})`,
        'DidNotHappen',
      );
    }
    return { verified: true, keyId: result.keyId };
  }

  function chooseInterface(cardUrl: string, card: Json): Endpoint {
    const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces.filter(isRecord) : [];
    const chosen = interfaces.find((i) => i.protocolBinding === 'JSONRPC' && (i.protocolVersion === A2A_VERSION || (typeof i.protocolVersion === 'string' && i.protocolVersion.startsWith(`${A2A_VERSION}.`))));
    if (!chosen || typeof chosen.url !== 'string') {
      const offered = interfaces.map((i) => `${String(i.protocolBinding)} ${String(i.protocolVersion ?? '?')}`).join(', ') || 'none';
      throw new EffectFailure('A2aNoInterface', `the card at ${cardUrl} offers no JSONRPC interface at A2A ${A2A_VERSION} (it offers: ${offered})`, 'DidNotHappen');
    }
    let url: URL;
    try {
      url = new URL(chosen.url);
    } catch {
      throw new EffectFailure('A2aNoInterface', `the card at ${cardUrl} names an interface URL that is not a URL`, 'DidNotHappen');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new EffectFailure('A2aNoInterface', `the card at ${cardUrl} names an interface that is not http(s): ${url.protocol}`, 'DidNotHappen');
    // The message goes only to the card's own origin (scheme, host, port). The grant is
    // a2a:<card URL> and so names exactly one origin; the card is the far side's description,
    // never authority (signed or not: a signature says who wrote it, not where this run may
    // send). Following its interface URL to any origin netguard happens to allow would let a
    // card on one allowed host hand the user's message to another that no grant of this agent
    // named for this call. A grant cannot name an interface origin, and borrowing the grant of
    // another card on that origin would skip that grant's own approve and signed.
    const cardOrigin = new URL(cardUrl).origin;
    if (url.origin !== cardOrigin) {
      throw new EffectFailure(
        'A2aInterfaceOffOrigin',
        `the card at ${cardUrl} names the interface ${url.href}, which is not on the card's origin ${cardOrigin}; the grant a2a:${cardUrl} covers that origin only, so nothing was sent`,
        'DidNotHappen',
      );
    }
    const capabilities = isRecord(card.capabilities) ? card.capabilities : {};
    return { url: url.href, ...(typeof chosen.tenant === 'string' && chosen.tenant !== '' ? { tenant: chosen.tenant } : {}), streaming: capabilities.streaming === true };
  }

  /** One JSON-RPC call; the answer's `result`, or an A2aWireError naming the error. */
  async function rpc(endpoint: Endpoint, method: string, params: Json, signal?: AbortSignal, headers?: Record<string, string>): Promise<Json> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params: { ...params, ...(endpoint.tenant ? { tenant: endpoint.tenant } : {}) } });
    const response = await exchange(endpoint.url, { method: 'POST', body, accept: 'application/json', ...(signal ? { signal } : {}), ...(headers ? { headers } : {}) });
    const text = await readCapped(response.body, answerMax, `the answer to ${method}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new A2aWireError('A2aAnswerInvalid', `the answer to ${method} (HTTP ${response.statusCode}) is not JSON`);
    }
    if (!isRecord(parsed)) throw new A2aWireError('A2aAnswerInvalid', `the answer to ${method} is not a JSON-RPC response`);
    if (isRecord(parsed.error)) {
      const code = typeof parsed.error.code === 'number' ? parsed.error.code : NaN;
      throw new A2aWireError('A2aRemoteError', `${method} was refused with ${remoteErrorText(parsed.error)}`, code, parsed.error);
    }
    if (!isRecord(parsed.result)) throw new A2aWireError('A2aAnswerInvalid', `the answer to ${method} has no result object`);
    return parsed.result;
  }

  async function send(endpoint: Endpoint, request: A2aSendRequest, at: EffectAt, hop: OutsideHop | undefined): Promise<Json> {
    const context = request.agent !== undefined ? callerContextOf(at, request.agent) : null;
    const metadata = { ...(request.skill !== undefined ? { skill: request.skill } : {}), ...context?.metadata };
    const message = {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [messagePart(request.message)],
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(context ? { extensions: context.extensions } : {}),
    };
    // The same message (its messageId too) on every attempt: a refused one was never admitted.
    for (let attempt = 1; ; attempt++) {
      // The run's last word before each SendMessage leaves: a halt that came during the card
      // fetch (or a quota backoff) stops it here (runtime/a2a-effect.ts).
      hop?.beforeDispatch();
      const sent = await sendOnce(endpoint, message, context?.extensions);
      if (sent !== 'busy') return sent;
      if (attempt > busy.retries) throw new EffectFailure('A2aRemoteBusy', `${endpoint.url} refused SendMessage ${attempt} times: this caller's quota of open tasks there is full; nothing was admitted, try again later`, 'DidNotHappen');
      const step = Math.min(busy.maxMs, busy.initialMs * 2 ** (attempt - 1));
      await sleep(Math.ceil(step / 2 + (Math.random() * step) / 2), closing.signal);
      if (closing.signal.aborted) throw new EffectFailure('A2aRemoteBusy', `${endpoint.url} refused SendMessage (quota full) and the plane is stopping; nothing was admitted`, 'DidNotHappen');
    }
  }

  /** One SendMessage: the answer, or 'busy' for a remote plane's quota refusal (sent again by `send`). */
  async function sendOnce(endpoint: Endpoint, message: Json, extensions: string[] | undefined): Promise<Json | 'busy'> {
    try {
      return await rpc(endpoint, 'SendMessage', { message, configuration: { returnImmediately: true } }, undefined, extensions ? { [EXTENSIONS_HEADER]: extensions.join(', ') } : undefined);
    } catch (error) {
      if (error instanceof A2aWireError) {
        // A remote plane's admission refusal, read only from the marked pair (a2a-wire.ts
        // planeRefusalOf): nothing was admitted, so nothing happened; a bare code is not one.
        const refusal = error.rpcError ? planeRefusalOf(error.rpcError) : null;
        if (refusal === 'quota') return 'busy';
        if (refusal) throw new EffectFailure(REFUSAL_FAILURES[refusal], `${error.message}; nothing was admitted`, 'DidNotHappen');
        if (error.rpcCode !== undefined && CLEAN_REFUSALS.has(error.rpcCode)) throw new EffectFailure(error.code, error.message, 'DidNotHappen');
        if (error.code === 'A2aRedirectRefused') throw new EffectFailure(error.code, error.message, 'DidNotHappen');
        throw new EffectFailure(error.code, `${error.message}; the message may have been acted on`, 'InDoubt');
      }
      if (neverConnected(error)) throw new EffectFailure('A2aUnreachable', `SendMessage to ${endpoint.url} was not sent: ${describe(error)}`, 'DidNotHappen');
      throw new EffectFailure('A2aNoAnswer', `SendMessage to ${endpoint.url} left and no answer came: ${describe(error)}`, 'InDoubt');
    }
  }

  async function getTask(endpoint: Endpoint, id: string, signal?: AbortSignal): Promise<Json> {
    const result = await rpc(endpoint, 'GetTask', { id }, signal);
    return result;
  }

  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const onAbort = () => (clearTimeout(timer), resolve());
      const timer = setTimeout(() => (signal.removeEventListener('abort', onAbort), resolve()), ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });

  async function followByPolling(endpoint: Endpoint, id: string, signal: AbortSignal): Promise<Json | null> {
    let wait = poll.initialMs;
    for (;;) {
      await sleep(wait, signal);
      if (signal.aborted) return null;
      const task = await getTask(endpoint, id, signal);
      if (TERMINAL.has(stateOf(task)) || INTERRUPTED.has(stateOf(task))) return task;
      wait = Math.min(poll.maxMs, Math.round(wait * 1.5));
    }
  }

  /**
   * One SubscribeToTask: the final (terminal or interrupted) state, 'TASK_STATE_UNSPECIFIED' when
   * the server answered JSON instead of a stream (e.g. the task ended first: GetTask reads it),
   * null when aborted, or `{dropped}` when the stream broke, ended early or went quiet for
   * streamIdle. The per-request deadline bounds only the headers: a remote task may work for
   * longer than any one request may take, so the body is bounded per event instead.
   */
  async function subscribeOnce(endpoint: Endpoint, id: string, signal: AbortSignal): Promise<string | null | { dropped: string; events: number }> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'SubscribeToTask', params: { id, ...(endpoint.tenant ? { tenant: endpoint.tenant } : {}) } });
    // undici is loaded first (net/undici.ts: on the first request): loading it is the plane's
    // own cost, and must not eat into the time the far side is given.
    const { request } = undici();
    const idle = new AbortController();
    let idleTimer = setTimeout(() => idle.abort(), streamIdle);
    const stillAlive = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => idle.abort(), streamIdle);
    };
    let events = 0;
    const dropped = (error?: unknown) => ({ dropped: idle.signal.aborted ? `no event for ${streamIdle} ms` : error === undefined ? 'the stream ended without a final status' : describe(error), events });
    try {
      const response = await request(endpoint.url, {
        method: 'POST',
        dispatcher: options.dispatcher,
        headers: { 'a2a-version': A2A_VERSION, accept: 'text/event-stream', 'content-type': 'application/json' },
        body,
        signal: AbortSignal.any([signal, closing.signal, idle.signal]),
        headersTimeout: deadline,
        bodyTimeout: 0,
      });
      if (response.statusCode >= 300) {
        discard(response.body);
        throw new A2aWireError('A2aAnswerInvalid', `SubscribeToTask answered HTTP ${response.statusCode}`);
      }
      const contentType = String(response.headers['content-type'] ?? '');
      if (!contentType.includes('text/event-stream')) {
        // A JSON-RPC error (e.g. the task is already terminal: UnsupportedOperation) comes as JSON.
        // It can also be a task that ended between SendMessage and the subscription: either way,
        // polling reads the task as it is.
        await readCapped(response.body, answerMax, 'the answer to SubscribeToTask');
        return 'TASK_STATE_UNSPECIFIED';
      }
      // Bounded per event, in bytes (net/sse.ts): the stream itself may last as long as the task.
      const parser = new SseParser({ maxEventBytes: answerMax });
      for await (const chunk of response.body) {
        stillAlive();
        let completed: SseEvent[];
        try {
          completed = parser.push(chunk as Buffer);
        } catch (error) {
          if (error instanceof ResponseTooLarge) throw new A2aWireError('A2aAnswerTooLarge', `one SubscribeToTask event is larger than ${answerMax} bytes; refused`);
          throw error;
        }
        for (const { data } of completed) {
          if (!data.trim()) continue;
          let parsed: Json;
          try {
            parsed = JSON.parse(data) as Json;
          } catch {
            throw new A2aWireError('A2aAnswerInvalid', 'a SubscribeToTask event is not JSON');
          }
          if (isRecord(parsed.error)) throw new A2aWireError('A2aRemoteError', `SubscribeToTask failed with ${remoteErrorText(parsed.error)}`, Number(parsed.error.code));
          events += 1;
          const result = isRecord(parsed.result) ? parsed.result : {};
          const state = isRecord(result.task) ? stateOf(result.task) : isRecord(result.statusUpdate) ? stateOf(result.statusUpdate) : null;
          if (state && (TERMINAL.has(state) || INTERRUPTED.has(state))) {
            discard(response.body);
            return state;
          }
        }
      }
      return signal.aborted ? null : dropped();
    } catch (error) {
      if (signal.aborted) return null;
      // A refusal or a bad answer is the far side's word, not a dropped line: it is not retried.
      if (error instanceof A2aWireError || closing.signal.aborted) throw error;
      return dropped(error);
    } finally {
      clearTimeout(idleTimer);
    }
  }

  /**
   * SubscribeToTask until a terminal or interrupted status arrives; the state, or null if aborted.
   * A dropped, ended or quiet subscription is opened again — SubscribeToTask is resumable: it
   * opens with the task as it stands, so nothing is lost between two subscriptions — after a
   * backoff, for as long as the caller's signal allows (the overall follow bound). A subscription
   * that outlived one request deadline, or carried an event after its opening snapshot, was a
   * working one and resets the count; after MAX_SHORT_SUBSCRIPTIONS short ones in a row the
   * server evidently will not hold a stream, and following falls back to GetTask polling.
   */
  async function followByStream(endpoint: Endpoint, id: string, signal: AbortSignal): Promise<string | null> {
    let wait = poll.initialMs;
    let short = 0;
    for (;;) {
      const opened = Date.now();
      const outcome = await subscribeOnce(endpoint, id, signal);
      if (outcome === null || typeof outcome === 'string') return outcome;
      const healthy = Date.now() - opened >= deadline || outcome.events > 1;
      short = healthy ? 0 : short + 1;
      if (healthy) wait = poll.initialMs;
      if (short >= MAX_SHORT_SUBSCRIPTIONS) return 'TASK_STATE_UNSPECIFIED';
      await sleep(wait, signal);
      if (signal.aborted) return null;
      wait = Math.min(poll.maxMs, Math.round(wait * 1.5));
    }
  }

  async function cancelRemote(endpoint: Endpoint, id: string): Promise<string> {
    try {
      const task = await rpc(endpoint, 'CancelTask', { id });
      return `CancelTask answered ${stateOf(task)}`;
    } catch (error) {
      // A repeat of a cancel that landed meets TaskNotCancelable: never a second act.
      return `CancelTask failed: ${describe(error)}`;
    }
  }

  return {
    pins,
    destinationOf(card) {
      try {
        return new URL(card).origin;
      } catch {
        return card;
      }
    },
    async send(request, at, hop?: OutsideHop) {
      const { card, verified } = await fetchCard(request.card, request.requireSigned === true);
      const endpoint = chooseInterface(request.card, card);
      const answer = await send(endpoint, request, at, hop);
      if (isRecord(answer.message)) return answerOf(answer.message, verified);
      if (!isRecord(answer.task) || typeof answer.task.id !== 'string') {
        throw new EffectFailure('A2aAnswerInvalid', 'SendMessage answered neither one task nor one message; the message may have been acted on', 'InDoubt');
      }
      const task = answer.task;
      const id = answer.task.id;
      if (TERMINAL.has(stateOf(task)) || INTERRUPTED.has(stateOf(task))) return { ...ended(task, id), card: verified };
      return { taskId: id, card: verified, following: endpoint };
    },
    async follow(accepted, _at: EffectAt, signal) {
      const id = accepted.taskId;
      const endpoint: Endpoint = accepted.following;
      // Following is bounded overall (followMax), not per request: the remote task may work far
      // longer than one request may take. Past the bound the remote task goes on and its outcome
      // is unknown here: in doubt, never cancelled behind the person's back.
      const expiry = AbortSignal.timeout(followMax);
      const following = AbortSignal.any([signal, expiry]);
      const expired = () => new EffectFailure('A2aFollowExpired', `remote task ${id} was created, and had not ended after ${followMax} ms of following; it may still finish there`, 'InDoubt');
      const cancelled = async () => new EffectFailure('RemoteTaskCancelled', `the run was cancelled while following remote task ${id}; ${await cancelRemote(endpoint, id)}`, 'Landed');
      // The plane is closing: nothing about the task has changed, so nothing is written; the
      // next plane follows it again by its id (RunParked leaves the effect open).
      const parked = () => new RunParked(`remote task ${id}`);
      let task: Json;
      try {
        const state = endpoint.streaming ? await followByStream(endpoint, id, following) : null;
        if (closing.signal.aborted) throw parked();
        if (expiry.aborted && !signal.aborted) throw expired();
        if (signal.aborted) throw await cancelled();
        const finished = endpoint.streaming && state !== 'TASK_STATE_UNSPECIFIED' ? await getTask(endpoint, id) : await followByPolling(endpoint, id, following);
        if (closing.signal.aborted) throw parked();
        if (expiry.aborted && !signal.aborted) throw expired();
        if (!finished || signal.aborted) throw await cancelled();
        task = finished;
      } catch (error) {
        if (error instanceof EffectFailure || error instanceof RunParked) throw error;
        if (closing.signal.aborted) throw parked();
        // The run's cancel can also land mid-request (a GetTask in flight): still a cancel.
        if (signal.aborted) throw await cancelled();
        if (expiry.aborted) throw expired();
        // The task exists and its outcome is unknown to us: a person decides.
        throw new EffectFailure('A2aFollowLost', `remote task ${id} was created, then following it failed: ${describe(error)}`, 'InDoubt');
      }
      return ended(task, id);
    },
    cancel(accepted) {
      return cancelRemote(accepted.following, accepted.taskId);
    },
    async call(request, at, signal) {
      const sent = await this.send(request, at);
      if (!('following' in sent)) return sent;
      return { ...(await this.follow(sent, at, signal)), card: sent.card };
    },
    close() {
      closing.abort(new Error('the A2A client is closing'));
    },
  };
}
