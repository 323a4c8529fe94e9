import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { NO_ROUTE_SCHEMAS } from './fastify-schemas';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('fastify servers without fastify route schemas', () => {
  it('a route that declares a schema fails its server at start, saying why', async () => {
    const app = Fastify({ logger: false, schemaController: NO_ROUTE_SCHEMAS });
    app.post('/things', { schema: { body: { type: 'object' } } }, async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(/fastify route schemas are not used by AgentPlane \(a validation schema on POST \/things\)/);
    await app.close();
  });

  it('a server without them answers, and never loads ajv or the schema compilers', () => {
    // A process of its own: this one may have loaded them already.
    const script = `
      const { createRequire } = await import('node:module');
      const { default: Fastify } = await import('fastify');
      const { NO_ROUTE_SCHEMAS } = await import('./src-main/base/fastify-schemas.ts');
      const app = Fastify({ logger: false, schemaController: NO_ROUTE_SCHEMAS });
      app.post('/echo', async (request) => ({ got: request.body }));
      const answer = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
      await app.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /node_modules\\/(ajv|@fastify\\/ajv-compiler|@fastify\\/fast-json-stringify-compiler)\\//.test(path));
      process.stdout.write(JSON.stringify({ status: answer.statusCode, body: answer.json(), loaded: loaded.length }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ status: 200, body: { got: { a: 1 } }, loaded: 0 });
  });

  it("every fastify server AgentPlane builds is built so", () => {
    const builds = sources('src-main').flatMap((path) =>
      [...readFileSync(path, 'utf8').matchAll(/\bFastify\(\{([^}]*)\}/g)].map((match) => ({ path, options: match[1]! })),
    );
    expect(builds.length).toBeGreaterThanOrEqual(3);
    for (const build of builds) expect(build.options, build.path).toContain('schemaController: NO_ROUTE_SCHEMAS');
  });
});
