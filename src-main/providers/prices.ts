/**
 * Money: what a model's tokens cost, from resources/prices.json (per provider and model, USD per
 * million tokens for input, output, cacheRead and cacheWrite; reasoning is billed as output, as
 * every provider bills it), with entries in `<data dir>/prices.json` overriding the bundled ones
 * model by model. Both files are validated with zod, and a bad one is a clear error naming the
 * file and the field, at load: a price silently read as zero would make every dollar ceiling a
 * lie.
 *
 * Lookup for a model: its own entry; else the entry its name extends with a date or version
 * suffix (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`: providers answer with the dated
 * name of the alias that was asked for, and the answering model is what is priced); else the
 * provider's `*` entry; else none. A model with no price is never free: the model effect marks
 * its spend `unaccounted` (tokens counted, cost unknown), the same honest word the failure ladder
 * uses for a bill the wire never gave (docs/GOVERNED-RUNTIME.md, "Model providers").
 *
 * Rates become integer micro-units per million tokens (1 USD/Mtok = 1,000,000), so the money in
 * hashed records stays integral; the bundled rates have at most six decimals, so nothing rounds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Pricing } from '../runtime/model-provider';

const Rate = z.number().finite().nonnegative().max(100_000, 'more than 100,000 USD per million tokens: a typo?');

export const PriceSchema = z
  .object({ input: Rate, output: Rate, cacheRead: Rate.optional(), cacheWrite: Rate.optional() })
  .strict();
export type Price = z.infer<typeof PriceSchema>;

const ModelName = z.string().min(1).max(200);
const ProviderName = z.string().regex(/^[a-z][a-z0-9-]*$/, 'a provider id (lowercase letters, digits, -)');

/** The file: `{provider: {model: price}}`, plus free-text keys starting with `_` (comments). */
export const PriceFileSchema = z.record(z.string(), z.unknown()).superRefine((file, ctx) => {
  for (const [key, value] of Object.entries(file)) {
    if (key.startsWith('_')) continue;
    const name = ProviderName.safeParse(key);
    if (!name.success) ctx.addIssue({ code: 'custom', path: [key], message: name.error.issues[0]!.message });
    const models = z.record(ModelName, PriceSchema).safeParse(value);
    if (!models.success) for (const issue of models.error.issues) ctx.addIssue({ code: 'custom', path: [key, ...issue.path.map(String)], message: issue.message });
  }
});

export type PriceTable = Record<string, Record<string, Price>>;

export class PriceFileError extends Error {
  override readonly name = 'PriceFileError';
}

/** Parses one price file's text; a bad one names the file and the field. */
export function parsePriceFile(text: string, source: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new PriceFileError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = PriceFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length ? issue.path.join('.') : '(top level)';
    throw new PriceFileError(`${source}: ${at}: ${issue.message}`);
  }
  const table: PriceTable = {};
  for (const [provider, models] of Object.entries(parsed.data)) {
    if (provider.startsWith('_')) continue;
    table[provider] = models as Record<string, Price>;
  }
  return table;
}

/** Micro-units per million tokens from USD per million tokens. */
function micros(usd: number): number {
  return Math.round(usd * 1_000_000);
}

export function pricingFromPrice(price: Price): Pricing {
  return {
    inputPerMTokMicros: micros(price.input),
    outputPerMTokMicros: micros(price.output),
    ...(price.cacheRead !== undefined ? { cacheReadPerMTokMicros: micros(price.cacheRead) } : {}),
    ...(price.cacheWrite !== undefined ? { cacheWritePerMTokMicros: micros(price.cacheWrite) } : {}),
  };
}

/** A date or version suffix a provider appends to an alias: -20250929, -2024-08-06, -001, -latest. */
const VERSION_SUFFIX = /^-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3}|latest)$/;

export class PriceBook {
  constructor(readonly table: PriceTable) {}

  /** The price of `model` on `provider`, or null: unpriced (see the module comment). */
  pricingFor(provider: string, model: string): Pricing | null {
    const models = this.table[provider];
    if (!models) return null;
    const name = model.startsWith('models/') ? model.slice('models/'.length) : model;
    const own = models[name];
    if (own) return pricingFromPrice(own);
    let best: string | null = null;
    for (const candidate of Object.keys(models)) {
      if (candidate === '*' || !name.startsWith(candidate)) continue;
      if (!VERSION_SUFFIX.test(name.slice(candidate.length))) continue;
      if (best === null || candidate.length > best.length) best = candidate;
    }
    if (best !== null) return pricingFromPrice(models[best]!);
    const any = models['*'];
    return any ? pricingFromPrice(any) : null;
  }
}

/** Bundled entries, overridden model by model by the user's. */
export function mergePrices(bundled: PriceTable, own: PriceTable): PriceTable {
  const merged: PriceTable = {};
  for (const [provider, models] of Object.entries(bundled)) merged[provider] = { ...models };
  for (const [provider, models] of Object.entries(own)) merged[provider] = { ...merged[provider], ...models };
  return merged;
}

function readPriceFile(path: string): PriceTable {
  return parsePriceFile(readFileSync(path, 'utf8'), path);
}

/** resources/prices.json, overridden by `<dataDir>/prices.json` when it exists. */
export function loadPrices(resourcesDir: string, dataDir?: string): PriceBook {
  const bundled = readPriceFile(join(resourcesDir, 'prices.json'));
  const ownPath = dataDir ? join(dataDir, 'prices.json') : null;
  const own = ownPath && existsSync(ownPath) ? readPriceFile(ownPath) : {};
  return new PriceBook(mergePrices(bundled, own));
}
