/**
 * Content-addressed staging for uploads (see peer-server.ts, stageUpload): bytes wait here under
 * their SHA-256 between the request and the run that stores them, so the journal records only
 * the digest and size. A staged blob is taken once and removed; leftovers of a crash are
 * swept when they are older than an hour.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface StagedBlob {
  sha256: string;
  bytes: number;
}

const DIGEST = /^[0-9a-f]{64}$/;

export class UploadStaging {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hourAgo = Date.now() - 3_600_000;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).mtimeMs < hourAgo) void rm(path, { force: true });
    }
  }

  async put(bytes: Buffer): Promise<StagedBlob> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const tmp = join(this.dir, `.${sha256}.${process.pid}.${Date.now()}`);
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, join(this.dir, sha256));
    return { sha256, bytes: bytes.length };
  }

  /** The staged bytes, checked against their digest; null when they are gone. */
  async take(blob: StagedBlob): Promise<Buffer | null> {
    if (!DIGEST.test(blob.sha256)) return null;
    const path = join(this.dir, blob.sha256);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch {
      return null;
    }
    if (createHash('sha256').update(bytes).digest('hex') !== blob.sha256) return null;
    return bytes;
  }

  async remove(blob: StagedBlob): Promise<void> {
    if (DIGEST.test(blob.sha256)) await rm(join(this.dir, blob.sha256), { force: true });
  }
}
