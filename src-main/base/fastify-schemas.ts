/**
 * What every fastify server of AgentPlane's is built with for fastify's own route schemas: none.
 *
 * No route declares a fastify (JSON Schema) schema. Every request body is checked with the
 * contract's and the protocols' zod schemas, which say what was wrong in the words the rest of
 * the plane uses, and answers are written as they are. Unless it is given compilers of its own,
 * fastify builds its default ones, ajv's and fast-json-stringify's (95 modules to read and
 * compile), with every server, whether a route ever asks for them or not: measured, building and
 * readying a one-route server took 58-88 ms with them against 16-25 ms without. The servers
 * built so are the UI bridge and the MCP endpoint (`agentplane serve` builds both before its URL
 * line) and every peer (the A2A endpoint is a plain node:http server). These compilers refuse instead: a route that declares a schema one day fails
 * when its server starts, with a message saying why, rather than going unchecked or loading
 * them back silently.
 */
import type { FastifyServerOptions } from 'fastify';

function refuse(what: string): never {
  throw new Error(`fastify route schemas are not used by AgentPlane (${what}): check the request with its zod schema in the handler (src-main/base/fastify-schemas.ts)`);
}

export const NO_ROUTE_SCHEMAS: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildValidator: () => ({ method, url }) => refuse(`a validation schema on ${method} ${url}`),
    buildSerializer: () => ({ method, url }) => refuse(`a response schema on ${method} ${url}`),
  },
};
