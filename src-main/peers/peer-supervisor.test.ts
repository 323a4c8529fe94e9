/**
 * The plane's peers by command, as the UI uses them: create, start (a real process), stop (its
 * port freed), restart, failures with the peer's own reason, sessions, revocation.
 */
import { createServer, connect, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from '../plane/plane';
import { call, failure, testPlane } from '../../tests/support/runtime-support';
import { Mcpv2Client } from './peer-client';
import { PEER_NODE_OPTIONS, PeerSupervisor } from './peer-supervisor';
import { silentLogger } from '../base/logger';
import { useTempFolders } from '../../tests/helpers/temp-folders';

const tempDir = useTempFolders('agentplane-supervisor-');

const planes: Plane[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
  for (const s of servers.splice(0)) s.close();
});

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

async function busyPort(): Promise<number> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

describe('peers hosted by the plane', () => {
  it('creates, starts, reports, stops (port freed) and restarts a peer', { timeout: 60_000 }, async () => {
    const plane = await testPlane();
    planes.push(plane);
    const created = await call(plane, 'peers.create', { id: 'gamma', port: 0, llmMode: true });
    expect(created).toMatchObject({ id: 'gamma', status: 'stopped', address: null, llmMode: true, auth: 'both' });
    const started = await call(plane, 'peers.start', { id: 'gamma' });
    expect(started).toMatchObject({ status: 'running', address: expect.stringMatching(/^mcpv2:\/\/127\.0\.0\.1:\d+\/mcpv2$/) });
    const client = Mcpv2Client.at(started.address!);
    const session = await client.freshSession();
    expect(await client.callTool('ping', {}, { auth: { sessionId: session } })).toMatchObject({ pong: true });
    const { sessions } = await call(plane, 'peers.sessions', { id: 'gamma' });
    expect(sessions).toHaveLength(1);
    expect(await call(plane, 'peers.revokeSession', { id: 'gamma', label: sessions[0]!.label })).toEqual({ revoked: true });
    await expect(client.callTool('ping', {}, { auth: { sessionId: session } })).rejects.toMatchObject({ stage: 'session' });

    expect((await failure(plane, 'peers.start', { id: 'gamma' })).message).toContain('already running');
    const port = Number(/:(\d+)\//.exec(started.address!)![1]);
    const stopped = await call(plane, 'peers.stop', { id: 'gamma' });
    expect(stopped.status).toBe('stopped');
    expect(await portFree(port)).toBe(true);
    expect((await failure(plane, 'peers.stop', { id: 'gamma' })).code).toBe('AP_CONFLICT');
    const restarted = await call(plane, 'peers.restart', { id: 'gamma' });
    expect(restarted.status).toBe('running');
    const lifecycle = (await plane.journal.readRange(1, null, 100)).filter((r) => r.kind === 'PeerLifecycle').map((r) => (r.body as { event: string }).event);
    expect(lifecycle).toEqual(['started', 'stopped', 'started']);
  });

  it('reports a busy port and a non-local address with the peer\'s own reason', { timeout: 60_000 }, async () => {
    const plane = await testPlane();
    planes.push(plane);
    const port = await busyPort();
    await call(plane, 'peers.create', { id: 'busy', port });
    const busy = await failure(plane, 'peers.start', { id: 'busy' });
    expect(busy.message).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect((await call(plane, 'peers.list', {})).peers.find((p) => p.id === 'busy')).toMatchObject({ status: 'failed', error: expect.stringContaining('already in use') });

    await call(plane, 'peers.create', { id: 'faraway', port: 0, publicIp: '192.0.2.10' });
    const far = await failure(plane, 'peers.start', { id: 'faraway' });
    expect(far.message).toContain('not on a local interface');
  });

  it('speaks UI, not CLI: a busy port is AP_PORT_IN_USE without flags, and a running peer\'s port is refused at create', { timeout: 60_000 }, async () => {
    const plane = await testPlane();
    planes.push(plane);
    const port = await busyPort();
    await call(plane, 'peers.create', { id: 'busy', port });
    const busy = await failure(plane, 'peers.start', { id: 'busy' });
    expect(busy).toMatchObject({ code: 'AP_PORT_IN_USE', message: `peer busy could not start: port ${port} on 127.0.0.1 is already in use` });
    const listed = (await call(plane, 'peers.list', {})).peers.find((p) => p.id === 'busy');
    expect(listed?.error).toContain('already in use');
    expect(listed?.error).not.toContain('--');

    await call(plane, 'peers.create', { id: 'holder', port: 0 });
    const held = await call(plane, 'peers.start', { id: 'holder' });
    const heldPort = Number(/:(\d+)\//.exec(held.address!)![1]);
    const refused = await failure(plane, 'peers.create', { id: 'squatter', port: heldPort });
    expect(refused).toMatchObject({ code: 'AP_PORT_IN_USE', message: `port ${heldPort} is in use by the running peer holder` });
    expect((await call(plane, 'peers.list', {})).peers.some((p) => p.id === 'squatter')).toBe(false);
  });

  it('refuses bad requests clearly', async () => {
    const plane = await testPlane();
    planes.push(plane);
    expect((await failure(plane, 'peers.create', { id: 'Bad Id!', port: 1 })).message).toContain('id: ');
    expect((await failure(plane, 'peers.start', { id: 'ghost' })).code).toBe('AP_NOT_FOUND');
    await call(plane, 'peers.create', { id: 'dup', port: 0 });
    expect((await failure(plane, 'peers.create', { id: 'dup', port: 0 })).message).toContain('already exists');
    await call(plane, 'peers.revoke', { id: 'dup' });
    expect((await failure(plane, 'peers.start', { id: 'dup' })).message).toContain('revoked');
  });
});

describe('the command a supervisor launches', () => {
  it('starts each peer with the command it was given, followed by `peer start` and its flags', async () => {
    const dataDir = tempDir();
    // A stand-in for `agentplane`: it says what it was asked to run, as a peer reports a failure, and exits.
    const script = "console.log('agentplane: asked to run ' + process.argv.slice(1, 5).join(' ')); process.exit(3)";
    const supervisor = new PeerSupervisor(dataDir, silentLogger, () => undefined, [process.execPath, '-e', script]);
    supervisor.create({ id: 'given', port: 0 });
    const refused = await supervisor.start('given').then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(refused?.message).toContain('asked to run peer start --peer-id given');
    expect(supervisor.list().find((p) => p.id === 'given')).toMatchObject({ status: 'failed' });
  });

  it("runs each peer with the idle-peer V8 settings after the NODE_OPTIONS it would have had", async () => {
    const dataDir = tempDir();
    // The stand-in reports the options it was given, and that node took the inherited one (it refuses to start on an option it does not allow).
    const script = "console.log('agentplane: options ' + process.env.NODE_OPTIONS + ' | stack limit ' + Error.stackTraceLimit); process.exit(3)";
    const supervisor = new PeerSupervisor(dataDir, silentLogger, () => undefined, [process.execPath, '-e', script], { NODE_OPTIONS: '--stack-trace-limit=7' });
    supervisor.create({ id: 'flags', port: 0 });
    const refused = await supervisor.start('flags').then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(refused?.message).toContain(`options --stack-trace-limit=7 ${PEER_NODE_OPTIONS} | stack limit 7`);
  });
});
