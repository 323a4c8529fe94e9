/**
 * Serves the built renderer. Paths are resolved inside the renderer folder and anything that
 * would leave it is a 404; unknown paths without an extension fall back to index.html so a
 * reload on a client-side route still opens the UI. The page's CSP is sent as a header too
 * (the meta tag in index.html cannot carry frame-ancestors).
 */
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'";

export const staticUiPlugin: FastifyPluginAsync<{ rendererDir: string }> = async (app, { rendererDir }) => {
  const root = normalize(rendererDir + sep);

  app.get('/*', async (request, reply) => {
    const path = decodeURIComponent((request.url.split('?')[0] ?? '/').replace(/^\/+/, ''));
    let file = normalize(join(root, path === '' ? 'index.html' : path));
    if (!file.startsWith(root) || path.includes('\0')) return reply.code(404).type('text/plain').send('not found');
    if (extname(file) === '') file = join(root, 'index.html');
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      if (file === join(root, 'index.html')) {
        return reply.code(503).type('text/plain').send('the UI is not built; run `npm run build`');
      }
      return reply.code(404).type('text/plain').send('not found');
    }
    reply.header('Content-Security-Policy', UI_CSP);
    reply.header('Cache-Control', file.endsWith('index.html') ? 'no-store' : 'public, max-age=3600');
    return reply.type(TYPES[extname(file)] ?? 'application/octet-stream').send(body);
  });
};
