/**
 * A CLI call loads what its command needs, and no more (docs/PERFORMANCE.md: start-up). Each call is a
 * process, and most are one command against a running plane: `peer list`, `mcp servers list`,
 * `acp sessions` once loaded the peer server, the plane's MCP stdio server and the ACP tap with
 * their SDKs, fastify and SQLite, because the module that registers a command imported what
 * another command of it runs (bench/cli-call.bench.ts measured 0.97 s for `peer list` against
 * 0.15 s for node making the same request). Against the built CLI, with a module-loading hook
 * that names every module a call loads, this holds each such command to the contract client
 * and `node:http`, and `--version` to the program alone.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServeAndBrowser, makeTempDir, requireBuild, runCli, startServe, type ServeProcess } from './support/serve-process';

/** Packages a command that only asks a running plane must not load. */
const HEAVY = ['fastify', 'better-sqlite3', '@modelcontextprotocol/', '@agentclientprotocol/', '@a2a-js/', 'undici', 'hono', '@hono/', 'yaml', 'jose'];
const LOADED = 'agentplane-e2e-loaded ';

let dir: string;
let plane: ServeProcess;
let hookOptions: string;

beforeAll(async () => {
  requireBuild();
  dir = makeTempDir('cli-startup');
  const hooks = join(dir, 'hooks');
  mkdirSync(hooks);
  // Runs in Node's hooks thread: every module the call loads (ESM, and CommonJS loaded by
  // import) is named on stderr before it loads.
  writeFileSync(
    join(hooks, 'hook.mjs'),
    `export async function load(url, context, next) {\n  if (!url.startsWith('node:')) process.stderr.write(${JSON.stringify(LOADED)} + url + '\\n');\n  return next(url, context);\n}\n`,
  );
  writeFileSync(join(hooks, 'register.mjs'), `import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n`);
  hookOptions = `--import=${pathToFileURL(join(hooks, 'register.mjs')).href}`;
  plane = await startServe({ dataDir: join(dir, 'data'), env: { AGENTPLANE_DEMO_PEERS: '1' }, timeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  await closeServeAndBrowser(undefined, plane, { dirs: [dir] });
});

/** Runs the CLI with the hook; its answer, and the packages and built chunks it loaded. */
async function traced(args: string[]) {
  const run = await runCli(args, { env: { NODE_OPTIONS: hookOptions }, timeoutMs: 30_000 });
  const urls = run.stderr
    .split('\n')
    .filter((line) => line.startsWith(LOADED))
    .map((line) => line.slice(LOADED.length));
  const packages = new Set(urls.map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined));
  const chunks = urls.filter((url) => url.includes('/out/main/')).map((url) => url.slice(url.indexOf('/out/main/') + '/out/main/'.length));
  return { ...run, stderr: run.stderr.split('\n').filter((line) => !line.startsWith(LOADED)).join('\n'), packages: [...packages].sort(), chunks };
}

const heavyIn = (packages: string[]) => packages.filter((name) => HEAVY.some((heavy) => (heavy.endsWith('/') ? name.startsWith(heavy) : name === heavy)));

describe('a CLI call against a running plane', () => {
  it('loads the contract client and its HTTP transport for a question, not the peer server, the plane or an SDK', async () => {
    const dataDir = join(dir, 'data');
    const calls: Array<{ args: string[]; says: RegExp }> = [
      { args: ['peer', 'list', '--json'], says: /"id":"alpha"/ },
      { args: ['runs', 'list', '--json'], says: /^\[\]$|"runs"|^\[/m },
      { args: ['mcp', 'servers', 'list', '--json'], says: /^\[|"servers"/m },
      { args: ['acp', 'sessions', '--json'], says: /^\[|"sessions"/m },
      { args: ['providers', 'list', '--json'], says: /anthropic/ },
    ];
    for (const call of calls) {
      const run = await traced([...call.args, '--data-dir', dataDir]);
      const what = call.args.join(' ');
      expect(run.code, `${what}: ${run.stderr}`).toBe(0);
      expect(run.stdout, what).toMatch(call.says);
      // The hook saw the call load modules at all (the check below cannot pass for want of data).
      expect(run.chunks, what).toContain('cli.js');
      expect(run.packages, what).toContain('commander');
      expect(heavyIn(run.packages), what).toEqual([]);
    }
  }, 120_000);

  it('answers --version from the program alone: no command module, nothing it would load', async () => {
    const run = await traced(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(run.chunks).toContain('cli.js');
    expect(run.chunks.filter((chunk) => /-commands-|peer-run|mcp-stdio-serve|repl-/.test(chunk))).toEqual([]);
    expect(heavyIn(run.packages)).toEqual([]);
    expect(run.packages).not.toContain('ws');
  }, 60_000);

  it('still loads what a command that runs something needs: `peer start` brings the peer server', async () => {
    // The other side of the split: the heavy modules are loaded by the command that uses them.
    const run = await traced(['peer', 'start', '--port', '0', '--data-dir', join(dir, 'data'), '--secret-file', join(dir, 'missing-secret')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--secret-file');
    expect(run.chunks.some((chunk) => chunk.includes('peer-run'))).toBe(true);
    expect(run.packages).toContain('fastify');
  }, 60_000);
});
