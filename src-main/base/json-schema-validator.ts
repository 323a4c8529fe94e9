/**
 * ajv's 2020-12 validator, its module loaded on first use. ajv is 86 modules (with the
 * meta-schemas it compiles from): a peer that never meets a JSON Schema (no custom skills, no
 * structured answers, no agent manifests) need not read them at start, and fifty peers each
 * reading them cost fifty times over (docs/PERFORMANCE.md, "Fifty peers"). Loaded with
 * `require`, synchronously, so the callers stay synchronous: a manifest is compiled as it loads.
 */
import { createRequire } from 'node:module';
import type Ajv2020 from 'ajv/dist/2020.js';

export type Ajv = Ajv2020;
export type AjvOptions = NonNullable<ConstructorParameters<typeof Ajv2020>[0]>;

let Ajv2020Class: typeof Ajv2020 | undefined;

/** `new Ajv2020(options)`, loading ajv the first time. */
export function newAjv2020(options: AjvOptions): Ajv2020 {
  Ajv2020Class ??= (createRequire(import.meta.url)('ajv/dist/2020.js') as { default: typeof Ajv2020 }).default;
  return new Ajv2020Class(options);
}

/** One validator made on its first use (a module's shared instance, without loading ajv at import). */
export function lazyAjv2020(options: AjvOptions): () => Ajv2020 {
  let made: Ajv2020 | undefined;
  return () => (made ??= newAjv2020(options));
}
