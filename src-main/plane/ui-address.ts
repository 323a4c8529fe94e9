/**
 * Where the headless plane's UI was last served from, so a restarted plane comes back at the
 * same address: an open tab (which holds the URL's token in its session storage) reconnects by
 * itself and catches up from the journal, instead of needing a new URL. The plane reuses the
 * port and token when the port is free, and starts at a new port with a new token otherwise.
 *
 * The file (`ui.json`, 0600 in the user's own data dir, never written through a link) holds the
 * bridge token, which is why it is as private as plane.json. A file that does not parse is
 * ignored: the worst outcome is a new address, which is what a plane without it gets anyway.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writePrivateFileAtomically } from '../base/private-files';

const UiAddressSchema = z.object({ port: z.number().int().min(1).max(65535), token: z.string().min(32).max(200) });
export type UiAddress = z.infer<typeof UiAddressSchema>;

export function uiAddressPath(dataDir: string): string {
  return join(dataDir, 'ui.json');
}

export function readUiAddress(dataDir: string): UiAddress | null {
  try {
    const parsed = UiAddressSchema.safeParse(JSON.parse(readFileSync(uiAddressPath(dataDir), 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function rememberUiAddress(dataDir: string, address: UiAddress): void {
  writePrivateFileAtomically(uiAddressPath(dataDir), `${JSON.stringify(address)}\n`);
}
