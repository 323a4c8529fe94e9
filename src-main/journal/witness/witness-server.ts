/**
 * A tlog-witness (C2SP) over HTTP: `POST /add-checkpoint` with `old <size>`, the consistency
 * proof lines, a blank line and the log's signed checkpoint; answers the witness's timestamped
 * cosignature line (docs/WITNESS.md). Bound to 127.0.0.1 by default, and on a loopback address
 * it answers only requests whose Host is a loopback name, so a web page cannot reach it through
 * DNS rebinding.
 *
 * Each request is checked and the state updated and persisted synchronously, in one turn of
 * the event loop, so two submissions can never both pass the old-size check against the same
 * state and roll each other back (the race tlog-witness warns of).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { emptyRoot, verifyConsistency } from '../merkle';
import { checkNoteSignature, cosignatureLine, decodeBase64, LOG_KEY_HEADER, MAX_PROOF_LINES, NOTE_ED25519, NoteError, parseCheckpointText, parseNote, parseVerifierKey } from './signed-note';
import { addLogKeys, openWitnessFiles, readWitnessState, writeWitnessState, type WitnessFiles, type WitnessState } from './witness-state';

/** A request body larger than this is refused: a checkpoint and 63 proof lines fit many times over. */
const MAX_BODY_BYTES = 64 * 1024;
export const TLOG_SIZE_TYPE = 'text/x.tlog.size';

export interface WitnessOptions {
  dataDir: string;
  port?: number;
  host?: string;
  /** Log verifier keys to add (`--log-key`); each is kept in the state once added. */
  logKeys?: readonly string[];
  /**
   * Whether a log this witness has no key for may introduce its own with its first checkpoint
   * (the `agentplane-log-key` header), kept from then on. Default true; `--known-logs-only`
   * turns it off (docs/WITNESS.md, "How the witness learns the plane's key").
   */
  firstUse?: boolean;
  now?: () => number;
}

export interface RunningWitness {
  url: string;
  vkeyFile: string;
  files: WitnessFiles;
  close(): Promise<void>;
}

class Answer extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'text/plain; charset=utf-8',
  ) {
    super(message);
  }
}

interface Submission {
  old: number;
  proof: Buffer[];
  note: string;
}

/** Splits a request body into its old size, proof and note; 400 naming what is malformed. */
export function parseSubmission(body: string): Submission {
  const firstEnd = body.indexOf('\n');
  if (firstEnd < 0) throw new Answer(400, 'the body does not start with an "old <size>" line');
  const oldLine = body.slice(0, firstEnd);
  const match = /^old (0|[1-9][0-9]*)$/.exec(oldLine);
  if (!match || !Number.isSafeInteger(Number(match[1]))) throw new Answer(400, `the first line ${JSON.stringify(oldLine.slice(0, 40))} is not "old <size>" with a decimal size`);
  const blank = body.indexOf('\n\n', firstEnd);
  const proofText = blank < 0 ? null : body.slice(firstEnd + 1, blank + 1);
  if (proofText === null) throw new Answer(400, 'the body has no blank line before the checkpoint');
  const proofLines = proofText.length === 0 ? [] : proofText.slice(0, -1).split('\n');
  if (proofLines.length > MAX_PROOF_LINES) throw new Answer(400, `the consistency proof has ${proofLines.length} lines; at most ${MAX_PROOF_LINES} are allowed`);
  const proof = proofLines.map((line, i) => {
    try {
      const hash = decodeBase64(line, `proof line ${i + 1}`);
      if (hash.length !== 32) throw new NoteError(`proof line ${i + 1} is ${hash.length} bytes, not a 32-byte hash`);
      return hash;
    } catch (error) {
      throw new Answer(400, (error as Error).message);
    }
  });
  return { old: Number(match[1]), proof, note: body.slice(blank + 2) };
}

/**
 * Checks one submission against the state and, when it passes, returns the cosignature line
 * and the state to persist. Throws an Answer with the tlog-witness status otherwise.
 */
export function addCheckpoint(state: WitnessState, files: WitnessFiles, body: string, now: number, offeredKey: string | null = null): { line: string; state: WitnessState } {
  const submission = parseSubmission(body);
  let text: string;
  let signatures;
  let checkpoint;
  try {
    ({ text, signatures } = parseNote(submission.note));
    checkpoint = parseCheckpointText(text);
  } catch (error) {
    throw new Answer(400, `the checkpoint note is malformed: ${(error as Error).message}`);
  }
  if (!state.logs[checkpoint.origin] && offeredKey !== null) state = firstUseOf(state, checkpoint.origin, offeredKey);
  const log = state.logs[checkpoint.origin];
  if (!log) throw new Answer(404, `unknown log origin ${JSON.stringify(checkpoint.origin)}: this witness has no key for it (add one with --log-key)`);
  const signed = checkNoteSignature(parseVerifierKey(log.key, NOTE_ED25519), text, signatures);
  if (signed === 'absent') throw new Answer(403, `the checkpoint carries no signature by the key this witness knows for ${checkpoint.origin}`);
  if (signed === 'bad') throw new Answer(403, `the checkpoint's signature by ${checkpoint.origin}'s key does not verify`);
  if (submission.old > checkpoint.size) throw new Answer(400, `old size ${submission.old} is larger than the checkpoint's size ${checkpoint.size}`);
  if (submission.old !== log.size) throw new Answer(409, `${log.size}\n`, TLOG_SIZE_TYPE);
  if (checkpoint.size === 0 && !checkpoint.root.equals(emptyRoot())) throw new Answer(422, 'a checkpoint of size 0 must carry the empty tree\'s root');
  if (submission.old === 0) {
    if (submission.proof.length > 0) throw new Answer(422, 'a consistency proof from size 0 must be empty');
  } else {
    const oldRoot = Buffer.from(log.root ?? '', 'base64');
    if (!verifyConsistency(submission.old, checkpoint.size, oldRoot, checkpoint.root, submission.proof)) {
      throw new Answer(422, `the checkpoint at size ${checkpoint.size} is not an extension of the one cosigned at size ${submission.old}: the consistency proof does not verify`);
    }
  }
  const time = Math.floor(now / 1000);
  const line = cosignatureLine(files.signer, text, time);
  const next: WitnessState = { ...state, logs: { ...state.logs, [checkpoint.origin]: { ...log, size: checkpoint.size, root: checkpoint.root.toString('base64'), cosignedAt: time } } };
  return { line, state: next };
}

/**
 * A log's own key, offered with its first checkpoint, kept for its origin: refused unless it is
 * a well-formed Ed25519 verifier key named by that origin (the checkpoint's signature is then
 * checked with it like any other). Only the state returned carries it: a submission that fails
 * any later check records nothing.
 */
function firstUseOf(state: WitnessState, origin: string, offered: string): WitnessState {
  let key;
  try {
    key = parseVerifierKey(offered, NOTE_ED25519);
  } catch (error) {
    throw new Answer(400, `the offered log key is malformed: ${(error as Error).message}`);
  }
  if (key.name !== origin) throw new Answer(403, `the offered log key is named ${JSON.stringify(key.name)}, not the checkpoint's origin ${JSON.stringify(origin)}`);
  return addLogKeys(state, [offered]);
}

function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  const host = hostHeader.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Answer(413, `the body is larger than ${MAX_BODY_BYTES} bytes`));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
      if (Buffer.from(text, 'utf8').length !== bytes.length || text.includes('\uFFFD')) reject(new Answer(400, 'the body is not valid UTF-8'));
      else resolveBody(text);
    });
    request.on('error', reject);
  });
}

export async function startWitness(options: WitnessOptions): Promise<RunningWitness> {
  const files = openWitnessFiles(options.dataDir);
  let state = readWitnessState(files.stateFile);
  if (options.logKeys && options.logKeys.length > 0) {
    state = addLogKeys(state, options.logKeys);
    writeWitnessState(files.stateFile, state);
  }
  const host = options.host ?? '127.0.0.1';
  const guardHost = host === '127.0.0.1' || host === '::1' || host === 'localhost';
  const now = options.now ?? Date.now;
  const firstUse = options.firstUse ?? true;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const send = (status: number, text: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
      response.end(text);
    };
    try {
      if (guardHost && !isLoopbackHost(request.headers.host)) throw new Answer(403, 'this witness answers loopback hosts only');
      const path = (request.url ?? '').split('?')[0];
      if (path !== '/add-checkpoint') throw new Answer(404, 'not found: this witness serves POST /add-checkpoint');
      if (request.method !== 'POST') throw new Answer(405, 'add-checkpoint takes a POST');
      const body = await readBody(request);
      const offered = firstUse ? request.headers[LOG_KEY_HEADER] : undefined;
      const result = addCheckpoint(state, files, body, now(), typeof offered === 'string' ? offered : null);
      // Persisted before the answer, in the same turn as the check (see the file's comment).
      writeWitnessState(files.stateFile, result.state);
      state = result.state;
      send(200, result.line);
    } catch (error) {
      if (error instanceof Answer) send(error.status, error.status === 409 ? error.message : `${error.message}\n`, error.type);
      else send(500, 'the witness failed to handle this request\n');
    }
  };
  const server: Server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    vkeyFile: files.vkeyFile,
    files,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
