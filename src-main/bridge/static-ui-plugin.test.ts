import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticUiPlugin, UI_CSP, withoutCoveredCspMeta } from './static-ui-plugin';

const CSP_META = /<meta\s[^>]*http-equiv=["']Content-Security-Policy["']/i;
const meta = (policy: string) => `<meta http-equiv="Content-Security-Policy" content="${policy}" />`;
const page = (head: string) => `<!doctype html><html><head><meta charset="UTF-8" />${head}<title>ui</title></head><body></body></html>`;
const HEADER = "default-src 'none'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

describe('the CSP meta tag of the served page', () => {
  it('is dropped when the header holds every one of its directives with the same sources', () => {
    const served = withoutCoveredCspMeta(page(meta("default-src 'none'; script-src 'self'")), HEADER);
    expect(served).not.toMatch(CSP_META);
    expect(served).toContain('<title>ui</title>');
    expect(served).toContain('<meta charset="UTF-8" />');
  });

  it('is kept when it has a directive the header lacks, so removing it would loosen the page', () => {
    const html = page(meta("default-src 'none'; worker-src 'none'"));
    expect(withoutCoveredCspMeta(html, HEADER)).toBe(html);
  });

  it('is kept when a directive of it has other sources than the header', () => {
    for (const policy of ["script-src 'self' 'unsafe-inline'", "script-src 'none'", 'connect-src *']) {
      const html = page(meta(policy));
      expect(withoutCoveredCspMeta(html, HEADER), policy).toBe(html);
    }
  });

  it('is kept, every one, when one of several is not covered; a page without one is unchanged', () => {
    const two = page(meta("script-src 'self'") + meta("img-src 'self'"));
    expect(withoutCoveredCspMeta(two, HEADER)).toBe(two);
    const none = page('');
    expect(withoutCoveredCspMeta(none, HEADER)).toBe(none);
  });

  it('is kept when it has no content to compare', () => {
    const html = page('<meta http-equiv="Content-Security-Policy" />');
    expect(withoutCoveredCspMeta(html, HEADER)).toBe(html);
  });
});

describe('the UI served over HTTP', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-static-ui-'));
    mkdirSync(join(dir, 'assets'));
    // The renderer's own index.html: its meta tag is what Electron's file:// load enforces.
    writeFileSync(join(dir, 'index.html'), readFileSync(join(import.meta.dirname, '..', '..', 'src-renderer', 'index.html')));
    writeFileSync(join(dir, 'assets', 'page.js'), 'export {};');
    app = Fastify();
    await app.register(staticUiPlugin, { rendererDir: dir });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("carries the renderer's policy as a header only, which holds all of the meta tag's and frame-ancestors", async () => {
    const source = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(source, "the renderer's index.html has its CSP meta tag").toMatch(CSP_META);
    for (const url of ['/', '/runs']) {
      const index = await app.inject({ method: 'GET', url });
      expect(index.statusCode).toBe(200);
      expect(index.headers['content-security-policy']).toBe(UI_CSP);
      expect(index.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      // A meta tag keeps Chromium's preload scanner from fetching the script ahead of the parser.
      expect(index.body, url).not.toMatch(CSP_META);
      expect(index.body).toContain('<div id="root"></div>');
    }
  });

  it('leaves every other file as it is on disk', async () => {
    const asset = await app.inject({ method: 'GET', url: '/assets/page.js' });
    expect(asset.body).toBe('export {};');
    expect(asset.headers['content-security-policy']).toBe(UI_CSP);
  });
});
