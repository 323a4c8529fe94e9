/**
 * Model providers as a person configures them in Settings (or `agentplane providers …`): a key,
 * a base URL and a default model per provider, kept by the plane (`<data dir>/providers.json`,
 * 0600; in the desktop app the key sealed with Electron's safeStorage), with the AGENTPLANE_*
 * variables winning over them, field by field, because a variable is what the person said
 * explicitly at launch.
 *
 * Secrets: a key goes in (`providers.set`) and never comes back out. A view says whether a key
 * is set, where it came from, and at most its last four characters (enough to tell two keys
 * apart, not enough to use one), so it can reach the UI, a log or a terminal without harm.
 * The base URL enters the provider's profile, hence the journal, so it may carry no
 * credentials, query or fragment (the drivers refuse the same; refused here first, by field).
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';

/** The providers a person can configure (`local` needs nothing; `openai-compatible` is `chat` under its former id). */
export const SETTABLE_PROVIDERS = ['anthropic', 'openai', 'gemini', 'chat'] as const;
export const SettableProviderSchema = z.enum(SETTABLE_PROVIDERS);
export type SettableProvider = z.infer<typeof SettableProviderSchema>;

/** Where a value came from: an AGENTPLANE_* variable at launch, or the stored settings. */
export const SettingSourceSchema = z.enum(['env', 'settings']);
export type SettingSource = z.infer<typeof SettingSourceSchema>;

/** Real keys are well under this; the cap keeps a pasted file from being taken for one. */
export const MAX_API_KEY_LENGTH = 512;

/**
 * An API key as a header carries it: printable ASCII, no spaces or line breaks (a pasted
 * newline would otherwise end the header early or be refused by the HTTP client mid-call).
 * The messages never repeat the value.
 */
export const ApiKeySchema = deferred(() => z
  .string()
  .min(1, 'the key is empty')
  .max(MAX_API_KEY_LENGTH, `the key is longer than ${MAX_API_KEY_LENGTH} characters`)
  .regex(/^[\x21-\x7e]+$/, 'the key must be printable ASCII without spaces or line breaks'));

function plainHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search && !url.hash;
  } catch {
    return false;
  }
}

export const ProviderBaseUrlSchema = deferred(() => z
  .string()
  .max(2048)
  .refine(plainHttpUrl, 'an http:// or https:// URL without credentials, query or fragment'));

export const ProviderModelSchema = deferred(() => z
  .string()
  .min(1)
  .max(200)
  .regex(/^\S+$/, 'a model name without spaces'));

/** The stored settings of one provider; every field optional (env may supply the rest). */
export const StoredProviderSettingsSchema = deferred(() => z
  .object({
    apiKey: ApiKeySchema.optional(),
    /** The key sealed by the desktop app (Electron safeStorage, base64); never beside `apiKey`. */
    sealedApiKey: z.string().min(1).max(8192).optional(),
    baseUrl: ProviderBaseUrlSchema.optional(),
    model: ProviderModelSchema.optional(),
  })
  .strict());
export type StoredProviderSettings = z.infer<typeof StoredProviderSettingsSchema>;

/** `<data dir>/providers.json`. */
export const ProvidersFileSchema = deferred(() => z
  .object({
    version: z.literal(1),
    // Partial: a provider with nothing stored is simply absent.
    providers: z.partialRecord(SettableProviderSchema, StoredProviderSettingsSchema).default({}),
  })
  .strict());
export type ProvidersFile = z.infer<typeof ProvidersFileSchema>;

/** What the plane shows of one provider: never its key. */
export const ProviderViewSchema = deferred(() => z.object({
  id: SettableProviderSchema,
  /** What it is, for people (PROVIDER_SETUP). */
  what: z.string(),
  /** Runs naming it are admitted (a key, or for `chat` a base URL). */
  configured: z.boolean(),
  keySet: z.boolean(),
  /** The key's last four characters (`…abcd`) when it is long enough that they give nothing away; else null. */
  keyHint: z.string().nullable(),
  keySource: SettingSourceSchema.nullable(),
  /** The base URL in force; null: the driver's default (or, for `chat`, none: not configured). */
  baseUrl: z.string().nullable(),
  baseUrlSource: SettingSourceSchema.nullable(),
  /** The default model in force; null: a step must name one. */
  model: z.string().nullable(),
  modelSource: SettingSourceSchema.nullable(),
  /** The variables that set each field at launch (shown beside an env-sourced value). */
  variables: z.object({ apiKey: z.string(), baseUrl: z.string(), model: z.string() }),
}));
export type ProviderView = z.infer<typeof ProviderViewSchema>;

export const ProvidersListSchema = deferred(() => z.object({
  providers: z.array(ProviderViewSchema),
  /** Where stored settings live. */
  file: z.string(),
  /** Keys are sealed by the desktop app's safeStorage (else kept in the 0600 file). */
  sealed: z.boolean(),
  /** Why the stored settings could not be read (they are then ignored, and never overwritten); null when fine. */
  error: z.string().nullable(),
}));
export type ProvidersList = z.infer<typeof ProvidersListSchema>;

export const ProviderSetRequestSchema = deferred(() => z
  .object({
    provider: SettableProviderSchema,
    /** Absent: keep the stored key. */
    apiKey: ApiKeySchema.optional(),
    /** Absent: keep; null: clear (back to the driver's default). */
    baseUrl: ProviderBaseUrlSchema.nullable().optional(),
    model: ProviderModelSchema.nullable().optional(),
  })
  .strict());

/** The answer of `providers.test`: one tiny real call through the driver, not journaled. */
export const ProviderTestResultSchema = deferred(() => z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), model: z.string(), latencyMs: z.number().nonnegative() }),
  /** `error` is the provider's own message as the driver reports it: trimmed, without the key. */
  z.object({ ok: z.literal(false), error: z.string(), latencyMs: z.number().nonnegative() }),
]));
export type ProviderTestResult = z.infer<typeof ProviderTestResultSchema>;
