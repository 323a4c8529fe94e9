/**
 * The `agentplane` command against the real built process: what a person types and what a
 * script reads back. Every plane started here gets its own temp data dir and is stopped by
 * signal, the way an operator stops it.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  callCommand,
  makeTempDir,
  PACKAGE_VERSION,
  portAcceptsConnections,
  requireBuild,
  runCli,
  startServe,
  stopWith,
  type ServeProcess,
} from './support/serve-process';

const started: ServeProcess[] = [];
const tempDirs: string[] = [];

function tempDir(name: string): string {
  const dir = makeTempDir(name);
  tempDirs.push(dir);
  return dir;
}

async function serve(options: Parameters<typeof startServe>[0]): Promise<ServeProcess> {
  const plane = await startServe(options);
  started.push(plane);
  return plane;
}

beforeAll(() => requireBuild());

afterEach(() => {
  // A test that failed midway may leave its plane running; nothing else may outlive the test.
  for (const plane of started.splice(0)) plane.dispose();
});

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('agentplane (the built CLI)', () => {
  it('--version prints the package version', async () => {
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(PACKAGE_VERSION);
  });

  it('--help lists the serve command', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\s+serve\b/m);
  });

  it('serve starts without loading what only a later request needs (the MCP client SDK, the ACP SDK)', async () => {
    // Each costs tens of milliseconds of every start (bench serve-startup) and is needed only
    // once a person connects an MCP server or an editor session: they load then.
    const dir = tempDir('serve-modules');
    const log = join(dir, 'modules.log');
    const hook = resolve(import.meta.dirname, 'support', 'module-log-hook.mjs');
    await serve({ dataDir: join(dir, 'data'), env: { AGENTPLANE_MODULE_LOG: log, NODE_OPTIONS: `--import ${hook}` } });
    const loaded = readFileSync(log, 'utf8');
    // The log is working: the plane's own modules and the packages it needs are in it.
    expect(loaded).toMatch(/\/node_modules\/fastify\//);
    expect(loaded).toMatch(/\/node_modules\/@modelcontextprotocol\/server\//);
    expect(loaded).not.toMatch(/\/node_modules\/@modelcontextprotocol\/client\//);
    expect(loaded).not.toMatch(/\/node_modules\/@agentclientprotocol\/sdk\//);
  });

  it('serve --ui-port 0 picks a free port, and two planes get two ports', async () => {
    const first = await serve({ dataDir: join(tempDir('port0'), 'a') });
    const second = await serve({ dataDir: join(tempDir('port0'), 'b') });
    expect(first.port).toBeGreaterThan(0);
    expect(second.port).toBeGreaterThan(0);
    expect(first.port).not.toBe(second.port);
    expect(await portAcceptsConnections(first.port)).toBe(true);
    expect(first.stdoutLines[0]).toMatch(new RegExp(`^AgentPlane ${PACKAGE_VERSION.replaceAll('.', '\\.')} \\(headless\\)`));
    expect((await callCommand(first, 'plane.status')).status).toBe(200);
    for (const plane of [first, second]) expect((await stopWith(plane, 'SIGTERM')).code).toBe(0);
  });

  describe('serve --ui-port <a port already in use>', () => {
    let blocker: Server;
    let busyPort: number;

    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
      busyPort = (blocker.address() as AddressInfo).port;
    });

    afterAll(() => new Promise<void>((done) => blocker.close(() => done())));

    it('fails fast with a message naming the port, a non-zero exit, and no plane.json left', async () => {
      const dataDir = join(tempDir('busy'), 'data');
      const run = await runCli(['serve', '--ui-port', String(busyPort), '--no-open', '--data-dir', dataDir], { timeoutMs: 10_000 });
      expect(run.code).not.toBe(0);
      expect(run.code).not.toBeNull();
      expect(run.stderr).toContain(`port ${busyPort} is already in use`);
      expect(run.stderr).not.toMatch(/\n\s+at /); // one line for a person, not a stack trace
      expect(run.stdout).not.toContain('AGENTPLANE_UI_URL=');
      expect(run.elapsedMs).toBeLessThan(5000);
      expect(existsSync(join(dataDir, 'plane.json'))).toBe(false);
    });
  });

  it('--data-dir creates a folder that does not exist yet', async () => {
    const dataDir = join(tempDir('create'), 'not', 'there', 'yet');
    expect(existsSync(dataDir)).toBe(false);
    const plane = await serve({ dataDir });
    expect(existsSync(dataDir)).toBe(true);
    expect(existsSync(join(dataDir, 'plane.json'))).toBe(true);
    const status = await callCommand(plane, 'plane.status');
    expect(status.body).toMatchObject({ ok: true, value: { dataDir } });
    expect((await stopWith(plane, 'SIGTERM')).code).toBe(0);
  });

  it('honours AGENTPLANE_DATA_DIR when no --data-dir is given', async () => {
    const fromEnv = join(tempDir('env'), 'from-env');
    const plane = await serve({ env: { AGENTPLANE_DATA_DIR: fromEnv } });
    const status = await callCommand(plane, 'plane.status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ ok: true, value: { dataDir: resolve(fromEnv), host: 'headless', version: PACKAGE_VERSION } });
    expect(existsSync(join(fromEnv, 'plane.json'))).toBe(true);
    expect((await stopWith(plane, 'SIGTERM')).code).toBe(0);
  });

  it('--data-dir wins over AGENTPLANE_DATA_DIR', async () => {
    const root = tempDir('precedence');
    const plane = await serve({ dataDir: join(root, 'flag'), env: { AGENTPLANE_DATA_DIR: join(root, 'env') } });
    expect((await callCommand(plane, 'plane.status')).body).toMatchObject({ value: { dataDir: join(root, 'flag') } });
    expect(existsSync(join(root, 'env'))).toBe(false);
    expect((await stopWith(plane, 'SIGTERM')).code).toBe(0);
  });

  it('exits 0 on SIGINT (Ctrl+C), closes its port and removes plane.json', async () => {
    const dataDir = join(tempDir('sigint'), 'data');
    const plane = await serve({ dataDir });
    const exit = await stopWith(plane, 'SIGINT', 5000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(await portAcceptsConnections(plane.port)).toBe(false);
    expect(existsSync(join(dataDir, 'plane.json'))).toBe(false);
  });
});
