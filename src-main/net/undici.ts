/**
 * undici, loaded the first time the plane makes an HTTP request of its own (a peer's health
 * check, a provider's call, an MCP or A2A client's request) rather than with the modules that
 * make them. It is some 110 CommonJS modules, each read and compiled when first required: about
 * a tenth of a fresh `agentplane serve`'s time from spawn to its URL line (bench serve-startup),
 * spent before the plane had anything to ask of anyone. The first request pays it instead, once.
 *
 * Only values go through here; `import type` from 'undici' costs nothing at run time and stays
 * where it is.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | null = null;

export function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return loaded;
}

/**
 * A dispatcher whose undici dispatcher is made on first use, by `make`, with undici loaded then.
 * What is handed around at start-up is a stand-in: any property read, write or `in` goes to the
 * real dispatcher, made at that moment, and the methods read from it are bound to it (undici's
 * `request` and `fetch` call `dispatch` on whatever they are given; `instanceof Dispatcher`
 * holds, the prototype being the real one's). Passing the stand-in along reads none of its
 * properties, so a plane that never reaches outside itself never loads undici.
 */
export function lazyDispatcher(make: (loaded: typeof Undici) => Undici.Dispatcher): { dispatcher: Undici.Dispatcher; close(): Promise<void> } {
  let made: Undici.Dispatcher | null = null;
  const real = (): Undici.Dispatcher => (made ??= make(undici()));
  const dispatcher = new Proxy({} as Undici.Dispatcher, {
    get(_target, key) {
      const target = real();
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  // Never made: nothing to close, and undici is not loaded to close it.
  return { dispatcher, close: () => (made ? made.close() : Promise.resolve()) };
}
