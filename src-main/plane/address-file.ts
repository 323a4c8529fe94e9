/**
 * A listener's last address in the data dir (`ui.json`, `mcp-address.json`, `a2a-address.json`):
 * a small JSON file, 0600, written whole under a temporary name and renamed (never through a
 * link), read back under its schema. A file that is missing or does not parse reads as none: the
 * worst outcome is a new address, which is what a plane without the file gets anyway.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writePrivateFileAtomically } from '../base/private-files';

/** A listener's port and the token its callers present (the UI's, the A2A endpoint's). */
export const PortAndTokenSchema = z.object({ port: z.number().int().min(1).max(65535), token: z.string().min(32).max(200) });

export interface AddressFile<T> {
  path(dataDir: string): string;
  /** The address last remembered, or null (none, or a file that does not parse). */
  read(dataDir: string): T | null;
  remember(dataDir: string, address: T): void;
}

export function addressFile<S extends z.ZodType>(name: string, schema: S): AddressFile<z.infer<S>> {
  const path = (dataDir: string) => join(dataDir, name);
  return {
    path,
    read(dataDir) {
      try {
        const parsed = schema.safeParse(JSON.parse(readFileSync(path(dataDir), 'utf8')));
        return parsed.success ? parsed.data : null;
      } catch {
        return null;
      }
    },
    remember(dataDir, address) {
      writePrivateFileAtomically(path(dataDir), `${JSON.stringify(address)}\n`);
    },
  };
}
