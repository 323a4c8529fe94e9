/**
 * The hosted plane (hosted-plane.ts) with real loopback servers: what it starts and writes, the
 * addresses it comes back at, the one way it fails, and both front ends that host it
 * (`agentplane serve` in this process, the desktop app's plane host as a Node child process from
 * out/main/plane-host.js, built by `npm test` before the unit tests) arriving at the same
 * endpoints and the same plane.json.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import { appRoot } from '../base/app-paths';
import { silentLogger } from '../base/logger';
import { startWebBridge } from '../bridge/web-bridge';
import { serve } from '../cli/serve';
import { readA2aAddress } from './a2a-endpoint';
import { HostedPlaneError, startHostedPlane, type HostedPlaneOptions, type StartedPlane } from './hosted-plane';
import { readMcpAddress } from './mcp-address';
import { planeFilePath, readPlaneFile } from './plane-file';
import { startPlaneHost } from './plane-host';
import { readUiAddress } from './ui-address';

const tempDir = useTempFolders('agentplane-hosted-');
const entry = join(appRoot(), 'out', 'main', 'plane-host.js');
const started: StartedPlane[] = [];
const blockers: Server[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const hosted of started.splice(0)) await hosted.close();
  for (const blocker of blockers.splice(0)) await new Promise<void>((done) => blocker.close(() => done()));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function options(dataDir: string, ports: Pick<HostedPlaneOptions, 'uiPort' | 'mcpPort' | 'a2aPort'> = {}): HostedPlaneOptions {
  return {
    plane: { dataDir, version: 'test', host: 'headless', logger: silentLogger, demoPeers: false },
    startUi: (plane, at) => startWebBridge({ plane, ...at, rendererDir: null }),
    ...ports,
  };
}

async function start(dataDir: string, ports: Pick<HostedPlaneOptions, 'uiPort' | 'mcpPort' | 'a2aPort'> = {}): Promise<StartedPlane> {
  const hosted = await startHostedPlane(options(dataDir, ports));
  started.push(hosted);
  return hosted;
}

function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function busyPort(): Promise<number> {
  const blocker = createServer();
  blockers.push(blocker);
  await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
  return (blocker.address() as { port: number }).port;
}

/** Where each listener of the data dir's plane is: from plane.json and the address files. */
function addressesOf(dataDir: string) {
  const file = readPlaneFile(dataDir);
  return {
    planeFile: file && { url: file.url, port: file.port, token: file.token, mcpUrl: file.mcpUrl, mcpToken: file.mcpToken },
    ui: readUiAddress(dataDir),
    mcp: readMcpAddress(dataDir),
    a2a: readA2aAddress(dataDir),
  };
}

describe('a hosted plane', () => {
  it('serves the UI, MCP and A2A on loopback, names them in plane.json, and closes in order', async () => {
    const dataDir = tempDir();
    const hosted = await start(dataDir);
    expect(readPlaneFile(dataDir)).toEqual({
      pid: process.pid,
      url: `http://127.0.0.1:${hosted.ui.port}`,
      port: hosted.ui.port,
      token: hosted.ui.token,
      startedAt: hosted.plane.status().startedAt,
      mcpUrl: hosted.mcp.url,
      mcpToken: hosted.mcp.token,
    });
    expect(hosted.uiOrigin).toBe(`http://127.0.0.1:${hosted.ui.port}`);
    for (const port of [hosted.ui.port, hosted.mcp.port, hosted.a2a.port]) expect(await listens(port)).toBe(true);
    await hosted.close();
    expect(existsSync(planeFilePath(dataDir))).toBe(false);
    for (const port of [hosted.ui.port, hosted.mcp.port, hosted.a2a.port]) expect(await listens(port)).toBe(false);
    // The data dir is free again: the plane's lock went with it.
    await start(dataDir);
  });

  it('comes back at its previous addresses (ports and tokens) when they are free', async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    const before = { ui: [first.ui.port, first.ui.token], mcp: [first.mcp.port, first.mcp.token], a2a: [first.a2a.port, first.a2a.token] };
    await first.close();
    const second = await start(dataDir);
    expect({ ui: [second.ui.port, second.ui.token], mcp: [second.mcp.port, second.mcp.token], a2a: [second.a2a.port, second.a2a.token] }).toEqual(before);
  });

  it('starts elsewhere when its previous UI port is taken and none was asked for', async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    const { port, token } = first.ui;
    await first.close();
    const squatter = createServer();
    blockers.push(squatter);
    await new Promise<void>((done) => squatter.listen(port, '127.0.0.1', done));
    const second = await start(dataDir);
    expect(second.ui.port).not.toBe(port);
    expect(second.ui.token).not.toBe(token);
    expect(readUiAddress(dataDir)).toEqual({ port: second.ui.port, token: second.ui.token });
  });

  it.each([
    ['ui', 'uiPort', 'UI and local API'],
    ['mcp', 'mcpPort', 'MCP endpoint'],
    ['a2a', 'a2aPort', 'A2A endpoint'],
  ] as const)('fails whole when the %s port asked for is busy: a clear error, nothing left running', async (endpoint, option, name) => {
    const dataDir = tempDir();
    const port = await busyPort();
    const failure = await startHostedPlane(options(dataDir, { [option]: port })).then(
      (hosted) => (started.push(hosted), null),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(HostedPlaneError);
    expect(failure).toMatchObject({ endpoint, port, code: 'EADDRINUSE', message: `the ${name} could not listen on 127.0.0.1: port ${port} is already in use` });
    expect(existsSync(planeFilePath(dataDir))).toBe(false);
    // What had started is closed: the listeners' addresses are free and the plane's lock released.
    const after = await start(dataDir);
    expect(after.plane.status().state).toBe('running');
  });
});

describe('both front ends host the same plane', () => {
  beforeAll(() => {
    if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  });

  it('`serve` and the desktop plane host serve the same endpoints and write the same plane.json', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();

    // `agentplane serve`, in this process, stopped by a promise instead of a signal.
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const lines: string[] = [];
    let printed!: () => void;
    const allPrinted = new Promise<void>((resolve) => (printed = resolve));
    const serving = serve({ dataDir, open: false }, (line) => {
      lines.push(line);
      if (line.startsWith('AGENTPLANE_A2A_TOKEN=')) printed();
    }, stopped);
    await Promise.race([allPrinted, serving]);
    const fromServe = addressesOf(dataDir);
    expect(readPlaneFile(dataDir)?.pid).toBe(process.pid);
    expect(lines).toContain(`AGENTPLANE_MCP_URL=${fromServe.mcp && `http://127.0.0.1:${fromServe.mcp.port}/mcp`}`);
    expect(lines).toContain(`AGENTPLANE_A2A_URL=http://127.0.0.1:${fromServe.a2a?.port}/`);
    stop();
    await serving;
    expect(existsSync(planeFilePath(dataDir))).toBe(false);

    // The desktop app's plane host, in a child process, on the same data dir.
    const child = fork(entry, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' } });
    children.push(child);
    const handle = await startPlaneHost(child, { dataDir, version: 'test', host: 'electron', demoPeers: false });
    const fromHost = addressesOf(dataDir);
    expect(readPlaneFile(dataDir)?.pid).toBe(child.pid);
    expect(handle.info).toEqual({ url: fromHost.planeFile?.url, pid: child.pid });
    await handle.stop();

    // Every listener at the same port with the same token, and plane.json naming the same ones.
    expect(fromServe.planeFile).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), mcpUrl: expect.stringMatching(/\/mcp$/), mcpToken: expect.any(String) });
    expect(fromHost).toEqual(fromServe);
  });
});
