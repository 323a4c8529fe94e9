/**
 * The built renderer bundle carries nothing of Node (docs/DESIGN.md layer rules): no better-sqlite3,
 * fastify, undici or other main-only package, no `node:` or bare built-in specifier, no
 * `require` of a built-in, and no `ipcRenderer` (the page reaches main only through the
 * preload's one object). The lint rules stop such imports in source; this scan checks what
 * actually shipped, which also catches one that arrives through a dependency.
 *
 * It reads out/renderer, so it needs a build. The scanner is run on planted samples first, so
 * a scanner that matches nothing cannot make this test pass.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const RENDERER_DIR = resolve(import.meta.dirname, '..', 'out', 'renderer');

/** Main-only packages (eslint.config.js NODE_ONLY, plus electron itself). */
const NODE_ONLY_PACKAGES = ['better-sqlite3', 'fastify', '@fastify/[^"\'`]+', 'undici', 'ws', 'pino', 'jose', 'commander', 'electron'];

/** Names whose mere presence in the bundle means main-side code was pulled in. */
const FORBIDDEN_WORDS = ['better-sqlite3', 'fastify', 'undici', 'ipcRenderer'];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const builtins = builtinModules.filter((name) => !name.startsWith('_')).map(escape);

/** `from "x"`, `import "x"`, `import("x")`, `require("x")` (also `__require`), `export … from "x"`. */
const specifier = (name: string) =>
  new RegExp(String.raw`(?:\bfrom\s*|\bimport\s*\(?\s*|\b(?:__)?require\s*\(\s*)["'\`](?:${name})(?:/[^"'\`]*)?["'\`]`, 'g');

const RULES: Array<{ what: string; pattern: RegExp }> = [
  { what: 'a node: specifier', pattern: specifier('node:[^"\'`]+') },
  { what: 'a Node built-in required', pattern: new RegExp(String.raw`\b(?:__)?require\s*\(\s*["'\`](?:${builtins.join('|')})(?:/[^"'\`]*)?["'\`]\s*\)`, 'g') },
  { what: 'a Node built-in imported', pattern: specifier(builtins.join('|')) },
  { what: 'a main-only package imported', pattern: specifier(NODE_ONLY_PACKAGES.join('|')) },
  ...FORBIDDEN_WORDS.map((word) => ({ what: `"${word}"`, pattern: new RegExp(String.raw`\b${escape(word)}\b`, 'g') })),
];

interface BundleHit {
  what: string;
  match: string;
  offset: number;
}

function scanForNodeOnly(source: string): BundleHit[] {
  const hits: BundleHit[] = [];
  for (const { what, pattern } of RULES) {
    for (const match of source.matchAll(pattern)) hits.push({ what, match: match[0], offset: match.index });
  }
  return hits;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function requireRendererBuild(): void {
  if (!existsSync(join(RENDERER_DIR, 'index.html'))) {
    throw new Error(`${RENDERER_DIR} is missing: run npm run build first`);
  }
}

describe('the scanner', () => {
  it.each([
    ['import "node:fs"', 'a node: specifier'],
    ['import { readFile } from "node:fs/promises";', 'a node: specifier'],
    ["const m = await import('node:crypto')", 'a node: specifier'],
    ['const fs = require("fs")', 'a Node built-in required'],
    ['var p = __require("path")', 'a Node built-in required'],
    ['import os from "os"', 'a Node built-in imported'],
    ['import Fastify from "fastify"', '"fastify"'],
    ['import { Pool } from "undici"', '"undici"'],
    ["import Database from 'better-sqlite3'", '"better-sqlite3"'],
    ['import { contextBridge } from "electron"', 'a main-only package imported'],
    ['import websocket from "@fastify/websocket"', 'a main-only package imported'],
    ['window.ipcRenderer.send("x")', '"ipcRenderer"'],
  ])('catches %s', (source, what) => {
    expect(scanForNodeOnly(source).map((hit) => hit.what)).toContain(what);
  });

  it.each([
    'const node = { type: "node:" + kind };',
    'import { createRoot } from "react-dom/client"',
    'const path = "a/b"; requireAuth("fs")',
    'const wsUrl = `${scheme}://${host}/api/events`',
  ])('leaves ordinary renderer code alone: %s', (source) => {
    expect(scanForNodeOnly(source)).toEqual([]);
  });
});

describe('the built renderer (out/renderer)', () => {
  it('has no Node-only module, built-in or ipcRenderer in any JS file', () => {
    requireRendererBuild();
    const jsFiles = filesUnder(RENDERER_DIR).filter((file) => /\.(?:m?js|cjs)$/.test(file));
    expect(jsFiles.length, 'the build produced JS').toBeGreaterThan(0);
    const findings = jsFiles.flatMap((file) =>
      scanForNodeOnly(readFileSync(file, 'utf8')).map((hit) => `${relative(RENDERER_DIR, file)}@${hit.offset}: ${hit.what}: ${hit.match}`),
    );
    expect(findings).toEqual([]);
  });

  it('index.html carries a CSP meta tag whose script-src allows no eval and no inline script', () => {
    requireRendererBuild();
    const html = readFileSync(join(RENDERER_DIR, 'index.html'), 'utf8');
    const metas = [...html.matchAll(/<meta\s[^>]*http-equiv=["']Content-Security-Policy["'][^>]*>/gi)].map((m) => m[0]);
    expect(metas, 'exactly one CSP meta').toHaveLength(1);
    const content = /\scontent=(["'])([\s\S]*?)\1/i.exec(metas[0]!)?.[2];
    expect(content, 'the CSP meta has a content attribute').toBeTruthy();
    const directives = new Map(
      content!
        .split(';')
        .map((part) => part.trim().split(/\s+/))
        .filter((words) => words[0])
        .map(([name, ...values]) => [name!.toLowerCase(), values] as const),
    );
    // Without script-src, default-src governs scripts; one of the two must be present.
    const scriptSrc = directives.get('script-src') ?? directives.get('default-src');
    expect(scriptSrc, 'script-src (or default-src) is set').toBeDefined();
    expect(scriptSrc).not.toContain("'unsafe-eval'");
    expect(scriptSrc).not.toContain("'unsafe-inline'");
    expect(scriptSrc).not.toContain('*');
    // What the policy forbids, the page must not need: every script is an external file.
    const inlineScripts = [...html.matchAll(/<script\b(?![^>]*\ssrc=)[^>]*>/gi)];
    expect(inlineScripts).toEqual([]);
  });
});
