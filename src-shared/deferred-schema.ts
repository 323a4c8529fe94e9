/**
 * A module-level schema built the first time anything touches it, not when its module loads.
 *
 * zod builds a schema eagerly, and not cheaply: every instance (each `z.string()`, each
 * `.optional()`, each check) is an object with some forty bound methods, and a module of object
 * schemas is hundreds of them. The shared vocabulary is loaded whole by every process (the
 * renderer's shell, `agentplane serve`, each CLI call) and each reads a few schemas of it: the
 * Peers view needs the peers answer, not the ACP session view or the MCP and provider settings.
 * Counted on the way to the Peers view's first rows, 934 zod instances were built while the
 * shell's modules evaluated, most of them never used. With the contract's and the protocol
 * vocabulary's module-level schemas deferred, 114 are, and 350 in all before the rows instead of
 * 1,010: the page's script time before the rows fell from 151 to 137 ms (bench renderer-load,
 * medians of four alternating runs). `agentplane serve` builds 2,458 before its URL line
 * instead of 3,278, and a CLI call 376 instead of 1,196.
 *
 * `deferred(() => z.object({...}))` returns a stand-in with the built schema's exact type. The
 * first property read (or any other operation) on it runs the thunk once; every operation then
 * goes to that one built schema. zod's own methods are closures over the instance they were
 * made for, so `stand-in.parse(x)` is the built schema's parse, `instanceof` answers through
 * zod's `Symbol.hasInstance` (which reads `_zod`), and a stand-in inside another schema (a
 * field, a union option) is built when that schema first reads it.
 *
 * What a stand-in is not: the same object as the schema it builds. Code that keys a map by a
 * schema object (zod's metadata registries, and so `.describe()` and `z.toJSONSchema`) would see
 * two objects; no schema deferred here has metadata, and schemas meant for JSON Schema output
 * (skills' inputs) are built directly. Hot paths should hold built schemas, not stand-ins: each
 * operation on a stand-in is one Proxy trap more (tens of nanoseconds); the record bodies the
 * journal checks on every append are built directly for that reason.
 */
export function deferred<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => (built ??= build());
  // The Proxy's own target stays an empty, extensible object: every trap answers from the built
  // schema, and no invariant of the target can contradict it. Descriptors are reported
  // configurable for the same reason (a non-configurable one must exist on the target).
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(schema(), key),
    set: (_target, key, value) => Reflect.set(schema(), key, value),
    has: (_target, key) => Reflect.has(schema(), key),
    ownKeys: () => Reflect.ownKeys(schema()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(schema(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(schema(), key, descriptor),
    deleteProperty: (_target, key) => Reflect.deleteProperty(schema(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
    setPrototypeOf: () => false,
    preventExtensions: () => false,
  });
}
