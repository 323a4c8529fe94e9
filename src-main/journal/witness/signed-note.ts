/**
 * The C2SP formats an outside witness speaks (docs/WITNESS.md): signed notes (a text ending in
 * a newline, a blank line, then lines `— <key name> base64(4-byte key ID || signature)`),
 * tlog checkpoints (origin line, decimal tree size, base64 root hash, optional extension
 * lines) as the note text, verifier keys as `<name>+<hex key ID>+base64(type || public key)`,
 * and timestamped Ed25519 cosignatures (type 0x04) over `cosignature/v1\ntime <secs>\n` and
 * the checkpoint text. Written here with node:crypto's Ed25519 rather than taken from a
 * package: the formats are a few lines each, and each check below names what was wrong.
 *
 * Key IDs are SHA-256(name || 0x0A || type || 32-byte public key)[:4]: type 0x01 for a log's
 * Ed25519 note signature, 0x04 for a witness's Ed25519 cosignature. A signature line whose
 * name or ID is not the key's is another key's and is ignored, as the signed-note format asks.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** Signature type of a plain Ed25519 note signature (a log signing its checkpoint). */
export const NOTE_ED25519 = 0x01;
/** Signature type of a timestamped Ed25519 cosignature (cosignature/v1, a witness). */
export const COSIGNATURE_ED25519 = 0x04;
const EM_DASH = '\u2014';
const ED25519_PUBLIC_BYTES = 32;
const ED25519_SIGNATURE_BYTES = 64;
const HASH_BYTES = 32;
/** A tlog-witness request carries at most this many proof lines (a 2^63-leaf tree's proof). */
export const MAX_PROOF_LINES = 63;
/** The header a log offers its verifier key in, for a witness that learns keys on first use (docs/WITNESS.md). */
export const LOG_KEY_HEADER = 'agentplane-log-key';
/** Signature lines read from one note at most: the format asks verifiers to accept 16. */
const MAX_SIGNATURES = 64;

export class NoteError extends Error {}

/** A verifier key: who signs (name, type) and with what (the raw 32-byte Ed25519 public key). */
export interface NoteKey {
  name: string;
  type: number;
  publicKey: Buffer;
  keyId: Buffer;
}

export interface NoteSigner extends NoteKey {
  privateKey: KeyObject;
}

export interface NoteSignature {
  name: string;
  keyId: Buffer;
  signature: Buffer;
  line: string;
}

/** Key names are non-empty, with no Unicode space and no plus (the signed-note format). */
export function checkKeyName(name: string): void {
  if (name.length === 0 || /[\s+]/u.test(name) || name.includes('\u2014')) throw new NoteError(`the key name ${JSON.stringify(name)} is empty or holds a space, a plus or an em dash`);
}

export function keyIdOf(name: string, type: number, publicKey: Buffer): Buffer {
  return createHash('sha256').update(name, 'utf8').update(Buffer.from([0x0a, type])).update(publicKey).digest().subarray(0, 4);
}

export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new NoteError('the key is not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

function ed25519PublicKey(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

export function noteSigner(name: string, type: number, privateKey: KeyObject): NoteSigner {
  checkKeyName(name);
  const publicKey = rawPublicKey(createPublicKey(privateKey));
  return { name, type, publicKey, keyId: keyIdOf(name, type, publicKey), privateKey };
}

export function noteSignerOfJwk(name: string, type: number, privateJwk: object): NoteSigner {
  return noteSigner(name, type, createPrivateKey({ key: privateJwk as never, format: 'jwk' }));
}

/** `<name>+<hex key ID>+base64(type || public key)`: the verifier key text a witness or log publishes. */
export function encodeVerifierKey(key: NoteKey): string {
  return `${key.name}+${key.keyId.toString('hex')}+${Buffer.concat([Buffer.from([key.type]), key.publicKey]).toString('base64')}`;
}

/** Strict base64 (RFC 4648 section 4, padded): refuses what a lenient decoder would skip. */
export function decodeBase64(text: string, what: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new NoteError(`${what} is not base64`);
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) throw new NoteError(`${what} is not canonical base64`);
  return bytes;
}

export function parseVerifierKey(text: string, expectType?: number): NoteKey {
  // The name holds no plus and the ID is hex, so the first two split it; base64 may hold more.
  const trimmed = text.trim();
  const first = trimmed.indexOf('+');
  const second = first < 0 ? -1 : trimmed.indexOf('+', first + 1);
  if (second < 0) throw new NoteError('a verifier key is <name>+<hex key ID>+<base64 key>; this one does not have three parts');
  const [name, idHex, keyText] = [trimmed.slice(0, first), trimmed.slice(first + 1, second), trimmed.slice(second + 1)];
  checkKeyName(name);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new NoteError(`the verifier key's ID ${JSON.stringify(idHex)} is not 8 hex digits`);
  const bytes = decodeBase64(keyText, "the verifier key's key part");
  if (bytes.length !== 1 + ED25519_PUBLIC_BYTES) throw new NoteError(`the verifier key holds ${bytes.length} bytes; an Ed25519 one holds 33 (type and key)`);
  const type = bytes[0]!;
  if (type !== NOTE_ED25519 && type !== COSIGNATURE_ED25519) throw new NoteError(`the verifier key's type 0x${type.toString(16).padStart(2, '0')} is neither an Ed25519 note key (0x01) nor an Ed25519 cosignature key (0x04)`);
  if (expectType !== undefined && type !== expectType) throw new NoteError(`the verifier key's type is 0x0${type}, expected 0x0${expectType}`);
  const publicKey = bytes.subarray(1);
  const keyId = keyIdOf(name, type, publicKey);
  if (keyId.toString('hex') !== idHex) throw new NoteError(`the verifier key's ID ${idHex} is not the hash of its name and key (${keyId.toString('hex')})`);
  return { name, type, publicKey, keyId };
}

/** One signature line (with its newline) by `signer` over `text`. */
export function signatureLine(signer: NoteSigner, message: Buffer | string, prefix: Buffer = Buffer.alloc(0)): string {
  const signature = sign(null, typeof message === 'string' ? Buffer.from(message, 'utf8') : message, signer.privateKey);
  return `${EM_DASH} ${signer.name} ${Buffer.concat([signer.keyId, prefix, signature]).toString('base64')}\n`;
}

export function signNote(signer: NoteSigner, text: string): string {
  return `${text}\n${signatureLine(signer, text)}`;
}

function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(`${EM_DASH} `)) throw new NoteError(`the signature line ${JSON.stringify(line.slice(0, 40))} does not start with an em dash and a space`);
  const rest = line.slice(2);
  const space = rest.indexOf(' ');
  if (space <= 0) throw new NoteError('a signature line has no key name');
  const name = rest.slice(0, space);
  checkKeyName(name);
  const bytes = decodeBase64(rest.slice(space + 1), `the signature of ${name}`);
  if (bytes.length < 5) throw new NoteError(`the signature of ${name} is too short to hold a key ID and a signature`);
  return { name, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4), line: `${line}\n` };
}

/** Splits signature lines (each ending in a newline) into signatures. */
export function parseSignatureLines(text: string): NoteSignature[] {
  if (text.length === 0) return [];
  if (!text.endsWith('\n')) throw new NoteError('a signature line does not end in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError(`the note has more than ${MAX_SIGNATURES} signatures`);
  return lines.map(parseSignatureLine);
}

/** A signed note split into its text (with its final newline) and its signatures. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new NoteError('the note holds a control character other than newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('the note has no blank line between its text and its signatures');
  const text = note.slice(0, split + 1);
  const signatures = parseSignatureLines(note.slice(split + 2));
  if (signatures.length === 0) throw new NoteError('the note has no signature');
  return { text, signatures };
}

function matches(key: NoteKey, sig: NoteSignature): boolean {
  return sig.name === key.name && sig.keyId.equals(key.keyId);
}

/**
 * Whether `key` signed `text` among `signatures`: 'absent' when no line is the key's (others
 * are ignored), 'bad' when one is and fails (the signed-note format rejects such a note).
 */
export function checkNoteSignature(key: NoteKey, text: string, signatures: readonly NoteSignature[]): 'ok' | 'absent' | 'bad' {
  const mine = signatures.filter((sig) => matches(key, sig));
  if (mine.length === 0) return 'absent';
  const publicKey = ed25519PublicKey(key.publicKey);
  for (const sig of mine) {
    if (sig.signature.length !== ED25519_SIGNATURE_BYTES || !verify(null, Buffer.from(text, 'utf8'), publicKey, sig.signature)) return 'bad';
  }
  return 'ok';
}

/** The first three lines of a tlog checkpoint, and its extension lines. */
export interface CheckpointText {
  origin: string;
  size: number;
  root: Buffer;
  extensions: string[];
}

export function checkpointText(origin: string, size: number, root: Uint8Array): string {
  return `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n`;
}

export function parseCheckpointText(text: string): CheckpointText {
  if (!text.endsWith('\n')) throw new NoteError('the checkpoint does not end in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new NoteError('a checkpoint has at least three lines (origin, tree size, root hash)');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin.length === 0) throw new NoteError("the checkpoint's origin line is empty");
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new NoteError(`the checkpoint's tree size ${JSON.stringify(sizeText)} is not a decimal without leading zeroes`);
  const root = decodeBase64(rootText, "the checkpoint's root hash");
  if (root.length !== HASH_BYTES) throw new NoteError(`the checkpoint's root hash is ${root.length} bytes, not 32`);
  if (extensions.some((line) => line.length === 0)) throw new NoteError('the checkpoint has an empty extension line');
  return { origin, size: Number(sizeText), root, extensions };
}

/** The message a cosignature/v1 signs: header, time line, the checkpoint text. */
function cosignedMessage(time: number, text: string): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${time}\n${text}`, 'utf8');
}

/** A witness's timestamped Ed25519 cosignature line over checkpoint `text` at `time` (POSIX seconds). */
export function cosignatureLine(signer: NoteSigner, text: string, time: number): string {
  const stamp = Buffer.alloc(8);
  stamp.writeBigUInt64BE(BigInt(time));
  return signatureLine(signer, cosignedMessage(time, text), stamp);
}

export type CosignatureCheck = { ok: true; time: number } | { ok: false; reason: string } | { ok: null };

/** Checks a cosignature line by `key` over `text`; `{ok: null}` when the line is another key's. */
export function checkCosignature(key: NoteKey, text: string, sig: NoteSignature): CosignatureCheck {
  if (!matches(key, sig)) return { ok: null };
  if (sig.signature.length !== 8 + ED25519_SIGNATURE_BYTES) return { ok: false, reason: `the cosignature by ${key.name} is not a timestamped Ed25519 signature (72 bytes)` };
  const stamp = sig.signature.readBigUInt64BE(0);
  if (stamp === 0n || stamp > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: `the cosignature by ${key.name} has no usable timestamp` };
  const time = Number(stamp);
  if (!verify(null, cosignedMessage(time, text), ed25519PublicKey(key.publicKey), sig.signature.subarray(8))) {
    return { ok: false, reason: `the cosignature by ${key.name} does not verify with its key over this checkpoint` };
  }
  return { ok: true, time };
}
