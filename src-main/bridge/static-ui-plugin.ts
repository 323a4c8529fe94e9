/**
 * Serves the built renderer. Paths are resolved inside the renderer folder and anything that
 * would leave it is a 404; unknown paths without an extension fall back to index.html so a
 * reload on a client-side route still opens the UI. The page's CSP is sent as a header, which
 * (unlike the meta tag in index.html) can carry frame-ancestors.
 *
 * index.html is served without its CSP meta tag when the header's policy already holds every
 * directive of the meta's, word for word, so nothing is loosened (the meta is what Electron's
 * file:// load has; over HTTP the header is the policy). The reason is speed: with a CSP meta
 * tag in the page, Chromium requests the page's script later. Measured (one bridge, twelve
 * alternated cold loads each in headless Chromium) the initial script was requested at a median
 * 159 ms after navigation with the meta tag and 110 ms without it; nothing else in the head (the
 * stylesheet, the other meta tags) moved it. In bench renderer-load the script now arrives
 * 10-35 ms sooner, while the first rows did not move beyond the noise on these two cores: there
 * a module script still waits for the end of parsing (DOM interactive, about as late on the
 * blank page), and the evaluation after it is what is long.
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

const CSP_META = /<meta\s[^>]*http-equiv=["']Content-Security-Policy["'][^>]*>\s*/gi;

/** A policy's directives, by lowercase name, each with its source list as one string. */
function directivesOf(policy: string): Map<string, string> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!.toLowerCase(), values.join(' ')] as const),
  );
}

/**
 * `html` without its CSP meta tags, when `headerPolicy` has every directive each of them has
 * with the same sources; otherwise `html` unchanged (both policies then apply, as before).
 */
export function withoutCoveredCspMeta(html: string, headerPolicy: string): string {
  const header = directivesOf(headerPolicy);
  const metas = [...html.matchAll(CSP_META)];
  if (metas.length === 0) return html;
  for (const [tag] of metas) {
    const content = /\scontent=(["'])([\s\S]*?)\1/i.exec(tag)?.[2];
    if (content === undefined) return html;
    for (const [name, sources] of directivesOf(content)) if (header.get(name) !== sources) return html;
  }
  return html.replace(CSP_META, '');
}

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
    if (file === join(root, 'index.html')) body = Buffer.from(withoutCoveredCspMeta(body.toString('utf8'), UI_CSP));
    reply.header('Content-Security-Policy', UI_CSP);
    reply.header('Cache-Control', file.endsWith('index.html') ? 'no-store' : 'public, max-age=3600');
    return reply.type(TYPES[extname(file)] ?? 'application/octet-stream').send(body);
  });
};
