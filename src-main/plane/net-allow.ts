/**
 * The plane's outbound allow list: which origins netguard (net/netguard.ts) lets through
 * whatever they resolve to, and the `net.allow.*` commands.
 *
 * Three sources, one answer:
 * - the person's own list, `<data dir>/net-allow.json` (0600, written atomically; `agentplane
 *   net allow <origin>`);
 * - each model provider base URL the person configured explicitly (an AGENTPLANE_*_BASE_URL
 *   variable or a base URL saved in Settings): configuring `http://127.0.0.1:11434/v1` is saying
 *   "talk to my local model server", so exactly that origin is allowed (a default base URL is
 *   not a choice of the person's and allows nothing);
 * - each MCP server URL in `<data dir>/mcp-servers.json`, for the same reason.
 * The last two are derived on every question, never copied into the file: removing the provider
 * or the server removes its entry, and the file stays the person's own words.
 *
 * The keyless default (the local provider, no servers) needs no entry: it makes no connection.
 * Only a person changes the list: a protocol caller (an MCP or A2A client acting through the
 * plane) is refused, as it is for provider settings.
 */
import { join } from 'node:path';
import { NetAllowFileSchema, type NetAllowEntry, type NetAllowList } from '../../src-shared/protocol/net-allow';
import { describeZodError, ErrorCode } from '../../src-shared/ipc/errors';
import { SETTABLE_PROVIDERS } from '../../src-shared/protocol/providers';
import { readRegularFile, writePrivateFileAtomically } from '../base/private-files';
import { PlaneError } from '../base/plane-error';
import { normaliseOrigin, type AllowList } from '../net/netguard';
import { readMcpServersFile } from '../protocols/mcp/client/mcp-servers-file';
import { resolveProviderSettings, type OpenedSettings } from './provider-settings';
import type { CommandsOf } from '../../src-shared/ipc/contract';
import type { CallContext, CommandHandlers } from './dispatch';

export function netAllowFilePath(dataDir: string): string {
  return join(dataDir, 'net-allow.json');
}

/** The allow file is unreadable or malformed, or an origin is not one; the message says which. */
export class NetAllowError extends Error {
  override readonly name = 'NetAllowError';
}

/** The person's own list, read and written through private files; the in-memory copy is what netguard asks. */
export class NetAllowStore {
  private origins = new Set<string>();
  readonly file: string;
  /** Why the file could not be read at startup (then nothing of it is allowed; the plane still starts). */
  readonly problem: string | null = null;

  constructor(dataDir: string) {
    this.file = netAllowFilePath(dataDir);
    try {
      this.origins = new Set(this.read());
    } catch (error) {
      // Refusing more is the safe side of a broken list; add/remove read the file again and
      // report the same problem to the person, naming the file.
      this.problem = (error as Error).message;
    }
  }

  private read(): string[] {
    let text: string | null;
    try {
      text = readRegularFile(this.file);
    } catch (error) {
      throw new NetAllowError(`${this.file}: cannot be read (${(error as Error).message})`);
    }
    if (text === null) return [];
    if (text.trim() === '') return [];
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new NetAllowError(`${this.file}: not valid JSON (${(error as Error).message}); fix or remove the file, nothing was changed`);
    }
    const parsed = NetAllowFileSchema.safeParse(json);
    if (!parsed.success) throw new NetAllowError(`${this.file}: ${describeZodError(parsed.error)}; fix the file, nothing was changed`);
    return parsed.data.origins.map((origin, index) => {
      try {
        return normaliseOrigin(origin);
      } catch (error) {
        throw new NetAllowError(`${this.file}: origins.${index}: ${(error as Error).message}`);
      }
    });
  }

  list(): string[] {
    return [...this.origins].sort();
  }

  has(origin: string): boolean {
    return this.origins.has(origin);
  }

  /** Adds an origin (normalised); answers it. Adding one already there changes nothing. */
  add(text: string): string {
    const origin = asOrigin(text);
    if (this.origins.has(origin)) return origin;
    const next = new Set([...this.read(), origin]);
    this.write(next);
    return origin;
  }

  /** Removes an origin; whether it was on the list. */
  remove(text: string): boolean {
    const origin = asOrigin(text);
    const current = new Set(this.read());
    if (!current.delete(origin)) {
      this.origins = current;
      return false;
    }
    this.write(current);
    return true;
  }

  private write(origins: Set<string>): void {
    const sorted = [...origins].sort();
    writePrivateFileAtomically(this.file, `${JSON.stringify({ origins: sorted }, null, 2)}\n`);
    this.origins = new Set(sorted);
  }
}

function asOrigin(text: string): string {
  try {
    return normaliseOrigin(text.trim());
  } catch (error) {
    throw new NetAllowError(`${(error as Error).message}`);
  }
}

export interface DerivedAllowSources {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** The provider settings in force now (the state provider-handlers.ts replaces on a change). */
  storedProviders: () => OpenedSettings;
}

/** The origins configured providers and declared MCP servers allow, with where each comes from. */
export function derivedAllowEntries(sources: DerivedAllowSources): NetAllowEntry[] {
  const entries: NetAllowEntry[] = [];
  const settings = resolveProviderSettings(sources.env, sources.storedProviders());
  for (const id of SETTABLE_PROVIDERS) {
    const baseUrl = settings[id].baseUrl;
    const origin = baseUrl ? originOrNull(baseUrl) : null;
    if (origin) entries.push({ origin, source: 'provider', from: id });
  }
  let servers: Record<string, { transport: string; url?: string }> = {};
  try {
    servers = readMcpServersFile(sources.dataDir).servers;
  } catch {
    // A malformed servers file allows nothing; the MCP commands report it by name.
  }
  for (const [name, config] of Object.entries(servers)) {
    const origin = config.transport === 'http' && config.url ? originOrNull(config.url) : null;
    if (origin) entries.push({ origin, source: 'mcp-server', from: name });
  }
  return entries;
}

/** A configured URL's origin (paths are a base URL's business, not the allow entry's). */
function originOrNull(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * The allow list netguard asks on every connection: the person's list, else the derived entries
 * (read live, so a provider or server configured a moment ago is already allowed). Derived
 * entries cost a read of mcp-servers.json per new connection, not per request: undici pools.
 */
export function planeAllowList(store: NetAllowStore, sources: DerivedAllowSources): AllowList {
  return {
    allows: (origin) => store.has(origin) || derivedAllowEntries(sources).some((entry) => entry.origin === origin),
  };
}

type NetCommands = CommandsOf<'net.allow'>;

function personOnly(context: CallContext): void {
  if (context.caller) throw new PlaneError(ErrorCode.Forbidden, "only a person at this plane can see or change where it may connect (its outbound allow list)");
}

function refusals<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof NetAllowError) throw new PlaneError(ErrorCode.BadRequest, error.message);
    throw error;
  }
}

export function netAllowHandlers(store: NetAllowStore, sources: DerivedAllowSources): Pick<CommandHandlers, NetCommands> {
  return {
    'net.allow.list': (_request, context): NetAllowList => {
      personOnly(context);
      const own: NetAllowEntry[] = store.list().map((origin) => ({ origin, source: 'allow-list' }));
      return { entries: [...own, ...derivedAllowEntries(sources)], file: store.file };
    },
    'net.allow.add': ({ origin }, context) =>
      refusals(() => {
        personOnly(context);
        return { origin: store.add(origin), source: 'allow-list' as const };
      }),
    'net.allow.remove': ({ origin }, context) =>
      refusals(() => {
        personOnly(context);
        return { removed: store.remove(origin) };
      }),
  };
}
