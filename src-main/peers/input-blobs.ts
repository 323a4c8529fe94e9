/**
 * Where a peer keeps the large values its journal names only by digest (see
 * runtime/large-values.ts): `<dataDir>/peers/<id>/inputs/<sha256>`, content-addressed, 0600.
 * A large skill argument goes here before its run is admitted (the RunAdmitted record holds its
 * digest and size), and translate_history's large answer before its run is sealed.
 *
 * What is true, and why:
 *
 * - A blob is on disk, fsynced and renamed into place (and the folder fsynced), before the
 *   journal record naming it is written: the journal never names bytes a power cut could lose.
 * - Blobs are kept, not swept like upload staging: a run suspended today (a budget ceiling, a
 *   halt) re-reads its input when it resumes next week, and LLM mode reads earlier turns of a
 *   conversation back. Unlike journal records they can be deleted by hand; a run whose blob is
 *   gone fails with a message saying so, and a conversation shows the turn as missing.
 * - A read checks the digest, so a blob altered on disk is treated as gone, never served.
 * - Content-addressed: the same value sent twice is stored once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, constants as fsConstants } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { digestRef, LARGE_VALUE_BYTES, type DigestRef } from '../runtime/large-values';
import { jsonBytes } from './input-bounds';

export const DigestRefSchema = z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().nonnegative() }).strict();

const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

export class InputBlobs {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Stores `text` (UTF-8) durably and returns its digest and size. */
  async put(text: string): Promise<DigestRef> {
    const ref = digestRef(text);
    // Already stored (and still intact: a damaged copy is replaced, not trusted).
    if ((await this.get(ref)) !== null) return ref;
    const temp = join(this.dir, `.${ref.sha256}.${process.pid}.${randomBytes(6).toString('hex')}`);
    let renamed = false;
    try {
      const handle = await open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW, 0o600);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, join(this.dir, ref.sha256));
      renamed = true;
      if (process.platform !== 'win32') {
        const folder = await open(this.dir, fsConstants.O_RDONLY);
        try {
          await folder.sync();
        } finally {
          await folder.close();
        }
      }
    } finally {
      if (!renamed) await unlink(temp).catch(() => undefined);
    }
    return ref;
  }

  /** The text stored under `ref`, or null when it is gone or no longer matches its digest. */
  async get(ref: DigestRef): Promise<string | null> {
    if (!DigestRefSchema.safeParse(ref).success) return null;
    let bytes: Buffer;
    try {
      bytes = await readFile(join(this.dir, ref.sha256), { flag: fsConstants.O_RDONLY | O_NOFOLLOW });
    } catch {
      return null;
    }
    if (bytes.length !== ref.bytes || createHash('sha256').update(bytes).digest('hex') !== ref.sha256) return null;
    return bytes.toString('utf8');
  }
}

/** A skill call's arguments as admitted: the small ones inline, the large ones by digest. */
export interface AdmittedArguments {
  arguments: Record<string, unknown>;
  /** Argument name -> digest and size of its JSON, stored in `InputBlobs`. */
  external?: Record<string, DigestRef>;
}

/**
 * Moves the largest arguments into `blobs` until what stays inline is at most
 * LARGE_VALUE_BYTES of JSON, and names each moved one by its digest and size. Arguments that
 * are small altogether are returned as they are (so ordinary calls journal exactly as before).
 */
export async function externalizeArguments(args: Record<string, unknown>, blobs: InputBlobs): Promise<AdmittedArguments> {
  let inline = jsonBytes(args);
  if (inline <= LARGE_VALUE_BYTES) return { arguments: args };
  const bySize = Object.entries(args)
    .map(([key, value]) => ({ key, value, size: jsonBytes(value) }))
    .sort((a, b) => b.size - a.size);
  const moved: Array<[string, DigestRef]> = [];
  for (const { key, value, size } of bySize) {
    if (inline <= LARGE_VALUE_BYTES) break;
    moved.push([key, await blobs.put(JSON.stringify(value))]);
    inline -= size;
  }
  const kept = new Set(moved.map(([key]) => key));
  // fromEntries defines own properties, so even an argument named __proto__ stays data.
  return { arguments: Object.fromEntries(Object.entries(args).filter(([key]) => !kept.has(key))), external: Object.fromEntries(moved) };
}

/** The arguments with every externalized one read back; `missing` names one whose bytes are gone. */
export async function restoreArguments(
  args: Record<string, unknown>,
  external: Record<string, DigestRef> | undefined,
  blobs: InputBlobs,
): Promise<{ ok: true; arguments: Record<string, unknown> } | { ok: false; missing: string }> {
  if (!external || Object.keys(external).length === 0) return { ok: true, arguments: args };
  const restored: Array<[string, unknown]> = [];
  for (const [key, ref] of Object.entries(external)) {
    const text = await blobs.get(ref);
    if (text === null) return { ok: false, missing: key };
    restored.push([key, JSON.parse(text) as unknown]);
  }
  return { ok: true, arguments: { ...args, ...Object.fromEntries(restored) } };
}
