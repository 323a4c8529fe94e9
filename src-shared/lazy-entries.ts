/**
 * An object whose every property is built the first time it is read, from the thunk of the
 * same name, and then kept (a plain data property from then on). zod builds each schema eagerly
 * and not cheaply, and a process that loads a table of schemas (the contract's commands, the
 * journal's record bodies) reads only a few of them: built lazily, an entry costs nothing until
 * it is first read (bench renderer-load, serve-startup, cli-call). Keys are enumerable from the
 * start, so `Object.keys(table)` lists the whole table without building any of it.
 */
export function lazyEntries<T extends Record<string, () => unknown>>(thunks: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const entries = {} as Record<string, unknown>;
  for (const [name, build] of Object.entries(thunks)) {
    Object.defineProperty(entries, name, {
      enumerable: true,
      configurable: true,
      get() {
        const value = build();
        Object.defineProperty(entries, name, { value, enumerable: true, configurable: false, writable: false });
        return value;
      },
    });
  }
  return entries as { readonly [K in keyof T]: ReturnType<T[K]> };
}
