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
import type { z } from 'zod';
import { addressFile, PortAndTokenSchema } from './address-file';

export type UiAddress = z.infer<typeof PortAndTokenSchema>;

const uiAddress = addressFile('ui.json', PortAndTokenSchema);
export const uiAddressPath = uiAddress.path;
export const readUiAddress = uiAddress.read;
export const rememberUiAddress = uiAddress.remember;
