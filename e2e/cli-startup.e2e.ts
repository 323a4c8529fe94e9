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
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, childEnv, closeServeAndBrowser, makeTempDir, requireBuild, runCli, startServe, type ServeProcess } from './support/serve-process';

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

/** The packages and built chunks named by the hook's lines in `stderr`. */
function loadedIn(stderr: string) {
  const urls = stderr
    .split('\n')
    .filter((line) => line.startsWith(LOADED))
    .map((line) => line.slice(LOADED.length));
  const packages = new Set(urls.map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined));
  const chunks = urls.filter((url) => url.includes('/out/main/')).map((url) => url.slice(url.indexOf('/out/main/') + '/out/main/'.length));
  return { packages: [...packages].sort(), chunks };
}

/** Runs the CLI with the hook; its answer, and the packages and built chunks it loaded. */
async function traced(args: string[]) {
  const run = await runCli(args, { env: { NODE_OPTIONS: hookOptions }, timeoutMs: 30_000 });
  return { ...run, stderr: run.stderr.split('\n').filter((line) => !line.startsWith(LOADED)).join('\n'), ...loadedIn(run.stderr) };
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

  it('a running peer loads its MCP and A2A servers on their first request, not at start', async () => {
    // An idle peer held the MCP SDK, hono and ajv and the A2A server from its start: a third of
    // its start-up CPU and 11 MB, times every peer (docs/PERFORMANCE.md, "Fifty peers").
    const dataDir = join(dir, 'peer-data');
    mkdirSync(dataDir);
    const child = spawn(process.execPath, [CLI, 'peer', 'start', '--name', 'lazy', '--port', '0', '--port-fallback', '--data-dir', dataDir, '--no-demo-session'], {
      cwd: REPO_ROOT,
      env: childEnv({ NODE_OPTIONS: hookOptions }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise((resolve) => child.once('close', resolve));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const bound = /MCPV2_BOUND_PORT=(\d+)/.exec(stdout);
          if (bound && stdout.includes('is up')) resolve(Number(bound[1]));
        });
        child.once('close', () => reject(new Error(`the peer exited before it was up; stdout:\n${stdout}\nstderr:\n${stderr}`)));
      });
      const atStart = loadedIn(stderr);
      // The hook saw the peer's own modules load (the checks below cannot pass for want of data).
      expect(atStart.packages).toContain('fastify');
      expect(atStart.chunks.some((chunk) => chunk.includes('peer-run'))).toBe(true);
      expect(heavyIn(atStart.packages).filter((name) => !['fastify', 'better-sqlite3', 'undici', 'jose'].includes(name))).toEqual([]);
      expect(atStart.packages).not.toContain('ajv');
      expect(atStart.chunks.filter((chunk) => chunk.includes('a2a-server'))).toEqual([]);

      const token = (JSON.parse(readFileSync(join(dataDir, 'mcp-address.json'), 'utf8')) as { token: string }).token;
      const initialize = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cli-startup', version: '1' } } }),
      });
      expect(initialize.status).toBe(200);
      expect(initialize.headers.get('mcp-session-id')).toMatch(/\S/);
      expect(await initialize.text()).toContain('"protocolVersion":"2025-11-25"');
      expect(loadedIn(stderr).packages).toContain('@modelcontextprotocol/server');

      const card = await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`);
      expect(card.status).toBe(200);
      expect(((await card.json()) as { skills: unknown[] }).skills.length).toBeGreaterThan(0);
      expect(loadedIn(stderr).chunks.filter((chunk) => chunk.includes('a2a-server')).length).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});
