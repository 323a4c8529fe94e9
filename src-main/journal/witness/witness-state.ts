/**
 * A witness's files (docs/WITNESS.md): its Ed25519 key (witness-ed25519.private.jwk, 0600, in
 * a 0700 folder; created on first start), its published verifier key (witness.vkey), and its
 * state, witness-state.json: per log origin the log's verifier key and the last checkpoint it
 * cosigned (size, root, when). The state is written to a temporary file, synced and renamed
 * before a cosignature is answered, so a witness that crashes never forgets a size it vouched
 * for and can never be talked into cosigning a rolled-back log.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { generateKeyPairSync, createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { writePrivateFile, readRegularFile } from '../../base/private-files';
import { COSIGNATURE_ED25519, encodeVerifierKey, NOTE_ED25519, noteSignerOfJwk, parseVerifierKey, rawPublicKey, type NoteSigner } from './signed-note';

const LogStateSchema = z.object({
  /** The log's verifier key (type 0x01): the only key whose checkpoints this witness cosigns for the origin. */
  key: z.string(),
  size: z.number().int().nonnegative(),
  /** The root at `size`, base64; absent until the first cosignature. */
  root: z.string().optional(),
  cosignedAt: z.number().int().optional(),
});
const StateSchema = z.object({ version: z.literal(1), logs: z.record(z.string(), LogStateSchema) });
export type WitnessLogState = z.infer<typeof LogStateSchema>;
export type WitnessState = z.infer<typeof StateSchema>;

export interface WitnessFiles {
  dir: string;
  signer: NoteSigner;
  vkeyFile: string;
  stateFile: string;
}

/** Loads the witness's key (creating it on first start) and writes its verifier key file. */
export function openWitnessFiles(dir: string): WitnessFiles {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const privatePath = join(dir, 'witness-ed25519.private.jwk');
  if (!existsSync(privatePath)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writePrivateFile(privatePath, JSON.stringify(privateKey.export({ format: 'jwk' })));
  }
  const jwk = JSON.parse(readRegularFile(privatePath) ?? '{}') as object;
  // The name is derived from the key, so one witness key always carries one name: the Ed25519
  // cosignature does not commit to the name, and a key must not serve under two (docs/WITNESS.md).
  const probe = noteSignerOfJwk('probe', COSIGNATURE_ED25519, jwk);
  const name = `agentplane-witness/${createHash('sha256').update(rawPublicKey(probe.privateKey)).digest('hex').slice(0, 16)}`;
  const signer = noteSignerOfJwk(name, COSIGNATURE_ED25519, jwk);
  const vkeyFile = join(dir, 'witness.vkey');
  writePrivateFile(vkeyFile, `${encodeVerifierKey(signer)}\n`);
  return { dir, signer, vkeyFile, stateFile: join(dir, 'witness-state.json') };
}

export function readWitnessState(file: string): WitnessState {
  if (!existsSync(file)) return { version: 1, logs: {} };
  const parsed = StateSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a witness state file: ${parsed.error.issues[0]?.message ?? 'unreadable'}`);
  return parsed.data;
}

/** Writes the state durably: temporary file, fsync, rename, fsync of the folder. */
export function writeWitnessState(file: string, state: WitnessState): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(state));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
  if (process.platform !== 'win32') {
    const dirFd = openSync(join(file, '..'), 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }
}

/**
 * Adds configured log keys (`--log-key`) to the state. A log key's name is its origin. An
 * origin already known under another key is refused: swapping a log's key would let whoever
 * holds the new one rewrite the log's history past this witness.
 */
export function addLogKeys(state: WitnessState, keys: readonly string[]): WitnessState {
  const logs = { ...state.logs };
  for (const text of keys) {
    const key = parseVerifierKey(text, NOTE_ED25519);
    const canonical = encodeVerifierKey(key);
    const known = logs[key.name];
    if (known && known.key !== canonical) throw new Error(`the log ${key.name} is already known to this witness under another key (${known.key.split('+')[1]}); a log's key is not replaced`);
    if (!known) logs[key.name] = { key: canonical, size: 0 };
  }
  return { ...state, logs };
}
