/**
 * Model provider settings a person makes in Settings or with `agentplane providers set`: per
 * provider (anthropic, openai, gemini, chat) a key, a base URL and a default model, kept in
 * `<data dir>/providers.json`.
 *
 * Keys are transport credentials (docs/GOVERNED-RUNTIME.md, "Model providers"): they go to the
 * driver, which puts them in one header, and nowhere else: never the journal, a log, an error or a
 * view. So:
 * - the file is the user's alone: written atomically, 0600, never through a link
 *   (base/private-files.ts); a file others could read is refused rather than used, since its
 *   keys may already have leaked and the person must know, and a malformed one is refused
 *   naming the file, never overwritten (a Save must not erase keys a person can still repair);
 * - in the desktop app the key is sealed with Electron's safeStorage (the OS keychain) through a
 *   `KeySealer`, so the file holds only ciphertext; headless, where there is no keychain, the
 *   0600 file is the protection, as for the plane's other secrets;
 * - errors name the file and the field, never a value: JSON.parse's own message quotes the
 *   text around the fault, which may be a key, so it is not passed on.
 *
 * The AGENTPLANE_* variables win over stored settings, field by field: a variable is what the
 * person said explicitly when launching this plane, and a Save in a window must not silently
 * override it. Views say which source each value came from.
 */
import { join } from 'node:path';
import {
  ProvidersFileSchema,
  SETTABLE_PROVIDERS,
  type ProviderView,
  type ProvidersFile,
  type SettableProvider,
  type SettingSource,
  type StoredProviderSettings,
} from '../../src-shared/protocol/providers';
import { PROVIDER_SETUP } from '../runtime/model-provider';
import { readRegularFile, writePrivateFileAtomically } from '../base/private-files';

export const PROVIDERS_FILE = 'providers.json';

/**
 * Seals keys at rest: the desktop app's safeStorage (encryptString/decryptString, the OS
 * keychain), reached from the plane's utility process over its channel (plane-host.ts). The
 * sealed text is base64 and opaque to the plane.
 */
export interface KeySealer {
  seal(plain: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

/** A refusal about the settings file: names the file and what is wrong, never a value in it. */
export class ProviderSettingsError extends Error {
  override readonly name = 'ProviderSettingsError';
}

/** The variables that set each field at launch. `chat` shares OpenAI's: one server, one base URL. */
export const PROVIDER_VARIABLES: Readonly<Record<SettableProvider, { apiKey: string; baseUrl: string; model: string }>> = {
  anthropic: { apiKey: 'AGENTPLANE_ANTHROPIC_API_KEY', baseUrl: 'AGENTPLANE_ANTHROPIC_BASE_URL', model: 'AGENTPLANE_ANTHROPIC_MODEL' },
  openai: { apiKey: 'AGENTPLANE_OPENAI_API_KEY', baseUrl: 'AGENTPLANE_OPENAI_BASE_URL', model: 'AGENTPLANE_OPENAI_MODEL' },
  chat: { apiKey: 'AGENTPLANE_OPENAI_API_KEY', baseUrl: 'AGENTPLANE_OPENAI_BASE_URL', model: 'AGENTPLANE_OPENAI_MODEL' },
  gemini: { apiKey: 'AGENTPLANE_GEMINI_API_KEY', baseUrl: 'AGENTPLANE_GEMINI_BASE_URL', model: 'AGENTPLANE_GEMINI_MODEL' },
};

/** One provider's stored settings with the key opened (in memory only). */
export interface OpenedProviderSettings {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
}
export type OpenedSettings = Partial<Record<SettableProvider, OpenedProviderSettings>>;

type Field = keyof OpenedProviderSettings;
const FIELDS: readonly Field[] = ['apiKey', 'baseUrl', 'model'];

/** The settings in force for one provider, each field with its source. */
export interface ResolvedProviderSettings {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
  sources: Record<Field, SettingSource | null>;
}

/**
 * Env over stored settings, field by field. One exception: `openai` and `chat` share the
 * AGENTPLANE_OPENAI_* variables (one server at launch, as before Settings existed), so each takes
 * them only as a group, when the variable that configures it at launch is set: `chat` when
 * AGENTPLANE_OPENAI_BASE_URL is, `openai` when AGENTPLANE_OPENAI_API_KEY is. Otherwise an OpenAI
 * key from the environment would be sent to a self-hosted server Settings names for `chat`, or
 * a key saved for `openai` to the self-hosted server the base URL variable names (with that
 * server's model): a key goes only where its own source says.
 */
export function resolveProviderSettings(env: NodeJS.ProcessEnv, stored: OpenedSettings = {}): Record<SettableProvider, ResolvedProviderSettings> {
  const read = (name: string) => (env[name] ? env[name] : undefined);
  const out = {} as Record<SettableProvider, ResolvedProviderSettings>;
  for (const id of SETTABLE_PROVIDERS) {
    const variables = PROVIDER_VARIABLES[id];
    const envApplies = id === 'chat' ? read(variables.baseUrl) !== undefined : id === 'openai' ? read(variables.apiKey) !== undefined : true;
    const own = stored[id] ?? {};
    const resolved: ResolvedProviderSettings = { sources: { apiKey: null, baseUrl: null, model: null } };
    for (const field of FIELDS) {
      const fromEnv = envApplies ? read(variables[field]) : undefined;
      const value = fromEnv ?? own[field];
      if (value === undefined) continue;
      resolved[field] = value;
      resolved.sources[field] = fromEnv !== undefined ? 'env' : 'settings';
    }
    out[id] = resolved;
  }
  return out;
}

/** Whether runs naming the provider are admitted: a key, or for `chat` (self-hosted, usually keyless) a base URL. */
export function isConfigured(id: SettableProvider, settings: ResolvedProviderSettings): boolean {
  return id === 'chat' ? settings.baseUrl !== undefined : settings.apiKey !== undefined;
}

/** Below this length the last four characters are too much of the key to show. */
const HINT_MIN_LENGTH = 16;

/** What may be shown of the providers: sources, URLs, models, whether a key is set; never a key. */
export function providerViews(env: NodeJS.ProcessEnv, stored: OpenedSettings): ProviderView[] {
  const resolved = resolveProviderSettings(env, stored);
  return SETTABLE_PROVIDERS.map((id) => {
    const settings = resolved[id];
    const key = settings.apiKey;
    return {
      id,
      what: PROVIDER_SETUP[id]?.what ?? id,
      configured: isConfigured(id, settings),
      keySet: key !== undefined,
      keyHint: key !== undefined && key.length >= HINT_MIN_LENGTH ? `…${key.slice(-4)}` : null,
      keySource: settings.sources.apiKey,
      baseUrl: settings.baseUrl ?? null,
      baseUrlSource: settings.sources.baseUrl,
      model: settings.model ?? null,
      modelSource: settings.sources.model,
      variables: { ...PROVIDER_VARIABLES[id] },
    };
  });
}

/** What stored settings read as: the opened keys, and what could not be used (named, never quoted). */
export interface SettingsRead {
  settings: OpenedSettings;
  /** Why some or all stored settings are not in force; empty when all are. */
  problems: string[];
}

/** A change to one provider's stored settings: absent fields are kept, null clears. */
export interface ProviderSettingsChange {
  apiKey?: string;
  baseUrl?: string | null;
  model?: string | null;
}

const windows = process.platform === 'win32';

/**
 * The settings file and, in the desktop app, the sealer. Writes are serialised (a seal is a
 * round trip to the Electron main, and two Saves must not interleave read and write).
 */
export class ProviderSettingsStore {
  readonly file: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly sealer: KeySealer | null = null,
  ) {
    this.file = join(dataDir, PROVIDERS_FILE);
  }

  /** Keys are sealed with the OS keychain (the desktop app), not only protected by the file's mode. */
  get sealed(): boolean {
    return this.sealer !== null;
  }

  /**
   * The stored settings with keys opened. A file that cannot be used at all (wider permissions,
   * not JSON, not the schema) throws ProviderSettingsError; a key that cannot be opened (sealed
   * by the desktop app and read headless, or under another keychain) leaves that key out and
   * says so in `problems`, so the other providers still work.
   */
  async read(): Promise<SettingsRead> {
    const file = this.readFile();
    const settings: OpenedSettings = {};
    const problems: string[] = [];
    for (const id of SETTABLE_PROVIDERS) {
      const stored = file.providers[id];
      if (!stored) continue;
      const opened: OpenedProviderSettings = {};
      if (stored.baseUrl !== undefined) opened.baseUrl = stored.baseUrl;
      if (stored.model !== undefined) opened.model = stored.model;
      if (stored.apiKey !== undefined) opened.apiKey = stored.apiKey;
      else if (stored.sealedApiKey !== undefined) {
        const how = `set it again (Settings, or agentplane providers set ${id} --key-stdin) or use ${PROVIDER_VARIABLES[id].apiKey}`;
        if (!this.sealer) problems.push(`${this.file}: the ${id} key was sealed by the desktop app's keychain and cannot be opened here; ${how}`);
        else {
          try {
            opened.apiKey = await this.sealer.open(stored.sealedApiKey);
          } catch {
            // The sealer's own message is not passed on: it is about ciphertext, not for a person.
            problems.push(`${this.file}: the ${id} key could not be opened with this machine's keychain; ${how}`);
          }
        }
      }
      settings[id] = opened;
    }
    return { settings, problems };
  }

  /** Applies `change` to one provider and writes the file; answers the settings now stored. */
  set(id: SettableProvider, change: ProviderSettingsChange): Promise<SettingsRead> {
    return this.serialised(async () => {
      const file = this.readFile();
      const next: StoredProviderSettings = { ...file.providers[id] };
      if (change.apiKey !== undefined) {
        delete next.apiKey;
        delete next.sealedApiKey;
        if (!this.sealer) next.apiKey = change.apiKey;
        else {
          try {
            next.sealedApiKey = await this.sealer.seal(change.apiKey);
          } catch (error) {
            // The keychain's own words (about itself, never the key); nothing is written.
            throw new ProviderSettingsError(`the ${id} key could not be sealed with the OS keychain (${error instanceof Error ? error.message.slice(0, 200) : 'refused'}); nothing was saved`);
          }
        }
      }
      if (change.baseUrl === null) delete next.baseUrl;
      else if (change.baseUrl !== undefined) next.baseUrl = change.baseUrl;
      if (change.model === null) delete next.model;
      else if (change.model !== undefined) next.model = change.model;
      this.write({ ...file, providers: { ...file.providers, [id]: next } });
      return this.read();
    });
  }

  /** Forgets everything stored for one provider; `removed` says whether there was anything. */
  remove(id: SettableProvider): Promise<SettingsRead & { removed: boolean }> {
    return this.serialised(async () => {
      const file = this.readFile();
      const removed = file.providers[id] !== undefined;
      if (removed) {
        const providers = { ...file.providers };
        delete providers[id];
        this.write({ ...file, providers });
      }
      return { ...(await this.read()), removed };
    });
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private write(content: ProvidersFile): void {
    writePrivateFileAtomically(this.file, `${JSON.stringify(content, null, 2)}\n`);
  }

  /** The file as stored; absent: nothing stored. Never through a link, never when others may read it. */
  private readFile(): ProvidersFile {
    let text: string | null;
    try {
      text = readRegularFile(this.file, (stat) => {
        if (windows) return;
        const mode = stat.mode & 0o777;
        if ((mode & 0o077) !== 0) {
          throw new ProviderSettingsError(
            `${this.file} can be read or written by others (mode 0${mode.toString(8)}): its keys may have leaked; rotate them, then make it the user's alone (chmod 600 ${this.file})`,
          );
        }
        if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw new ProviderSettingsError(`${this.file} belongs to another user (uid ${stat.uid})`);
      });
    } catch (error) {
      if (error instanceof ProviderSettingsError) throw error;
      // A link, a FIFO, not a regular file (readRegularFile names which), or an I/O error: never read keys through it.
      throw new ProviderSettingsError(`${this.file} cannot be read: ${(error as Error).message.replace(/^refusing to open [^:]*: /, '')}`);
    }
    if (text === null) return { version: 1, providers: {} };
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the text near the fault, which may be a key: not passed on.
      throw new ProviderSettingsError(`${this.file} is not valid JSON; fix or delete it (it is never overwritten while malformed)`);
    }
    const parsed = ProvidersFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => {
        const path = issue.path.length > 0 ? issue.path.map((part) => (String(part).length > 32 ? '…' : String(part))).join('.') : '(root)';
        // An unknown field's name is shown by path only: a key pasted as a field name stays unsaid.
        return `${path}: ${issue.code === 'unrecognized_keys' ? 'unknown field(s)' : issue.message}`;
      });
      throw new ProviderSettingsError(`${this.file} does not hold provider settings (${issues.join('; ')}); fix or delete it (it is never overwritten while malformed)`);
    }
    const both = SETTABLE_PROVIDERS.find((id) => parsed.data.providers[id]?.apiKey !== undefined && parsed.data.providers[id]?.sealedApiKey !== undefined);
    if (both) throw new ProviderSettingsError(`${this.file}: providers.${both} has both apiKey and sealedApiKey; keep one`);
    return parsed.data;
  }
}
