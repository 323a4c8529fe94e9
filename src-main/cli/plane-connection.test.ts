/**
 * The CLI reaches a running plane through what plane.json says, with the bridge token it holds,
 * so it trusts that file only when it is ours (owned by this user, mode 0600) and names a
 * loopback http URL; and it believes a reply only when it matches the contract's response
 * schema for the command it sent. Each forged case is an error naming why, never a TypeError.
 */
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planeFilePath, writePlaneFile } from '../plane/plane-file';
import { CliError } from './cli-error';
import { CommandFailed } from './cli-error';
import { connect } from './plane-connection';

const made: string[] = [];
const servers: Server[] = [];
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ap-cli-conn-'));
  made.push(dir);
  return dir;
}
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data dir whose plane.json names a live pid (this process) and the given URL. */
function dataDirPointingAt(url: string): string {
  const dir = folder();
  writePlaneFile(dir, { pid: process.pid, url, port: Number(new URL(url).port) || 80, token: 'the-token', startedAt: new Date().toISOString() });
  return dir;
}

/** A real HTTP server on 127.0.0.1 that answers every command with `body` (a string, sent as is). */
async function forgedPlane(status: number, body: string): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? ''}`);
    request.resume();
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => expect.unreachable('the CLI accepted it'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  expect(error).not.toBeInstanceOf(TypeError);
  return error as Error;
}

describe.runIf(process.platform !== 'win32')('plane.json is trusted only when it is ours and points at loopback', () => {
  it('refuses a plane.json others can read (mode 0644)', async () => {
    const dir = dataDirPointingAt('http://127.0.0.1:9');
    chmodSync(planeFilePath(dir), 0o644);
    const error = await refusal(connect(dir));
    expect(error.message).toContain(planeFilePath(dir));
    expect(error.message).toMatch(/mode 0644/);
  });

  it.runIf(process.getuid?.() === 0)('refuses a plane.json owned by another uid', async () => {
    const dir = dataDirPointingAt('http://127.0.0.1:9');
    chownSync(planeFilePath(dir), 65534, 65534);
    const error = await refusal(connect(dir));
    expect(error.message).toContain(planeFilePath(dir));
    expect(error.message).toMatch(/owned by uid 65534/);
  });

  it('refuses a plane.json whose URL is not a loopback http URL, and sends it nothing', async () => {
    for (const url of ['http://203.0.113.7:8080', 'https://127.0.0.1:8443', 'http://localhost.evil.example:80', 'http://user@evil.example:80', 'http://0.0.0.0:80']) {
      const dir = dataDirPointingAt(url);
      const error = await refusal(connect(dir));
      expect(error.message, url).toMatch(/not a loopback http URL/);
    }
  });

  it('accepts loopback forms: 127.0.0.0/8, [::1] and localhost', async () => {
    for (const url of ['http://127.0.0.1:9', 'http://127.4.5.6:9', 'http://[::1]:9', 'http://localhost:9']) {
      const connection = await connect(dataDirPointingAt(url));
      expect(connection.via, url).toBe('running plane');
      await connection.close();
    }
  });
});

describe('a reply from the plane is checked against the contract', () => {
  it('a forged reply of the wrong shape is a clear error naming the command, never a TypeError', async () => {
    for (const body of ['{"ok":true,"value":{"nonsense":1}}', 'null', '{"ok":true}', '"text"', 'not json at all', '{"ok":false,"error":{"code":"EVIL","message":1}}', '']) {
      const forged = await forgedPlane(200, body);
      const connection = await connect(dataDirPointingAt(forged.url));
      const error = await refusal(connection.call('plane.status', {}));
      expect(error.message, body).toContain('plane.status');
      expect(error.message, body).toMatch(/does not match the contract|not JSON/);
      expect(forged.seen).toEqual(['POST /api/commands/plane.status Bearer the-token']);
    }
  });

  it('a refusal in the contract\'s shape is reported with its code', async () => {
    const forged = await forgedPlane(409, '{"ok":false,"error":{"code":"AP_CONFLICT","message":"peer alpha is already running"}}');
    const connection = await connect(dataDirPointingAt(forged.url));
    const error = await refusal(connection.call('peers.start', { id: 'alpha' }));
    expect(error).toBeInstanceOf(CommandFailed);
    expect((error as CommandFailed).code).toBe('AP_CONFLICT');
    expect(error.message).toBe('peer alpha is already running');
  });

  it('a reply in the contract\'s shape is returned', async () => {
    const status = { version: '1.0.0', dataDir: '/x', journal: '/x/journal.sqlite', startedAt: '2026-01-01T00:00:00.000Z', uptimeMs: 5, host: 'headless', state: 'running' };
    const forged = await forgedPlane(200, JSON.stringify({ ok: true, value: status }));
    const connection = await connect(dataDirPointingAt(forged.url));
    await expect(connection.call('plane.status', {})).resolves.toEqual(status);
  });
});

describe('every command goes through the contract client', () => {
  it('a plane that does not answer is AP_UNAVAILABLE, naming which plane and where', async () => {
    const closed = await forgedPlane(200, '{}');
    for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
    const connection = await connect(dataDirPointingAt(closed.url));
    const error = await refusal(connection.call('plane.status', {}));
    expect((error as CommandFailed).code).toBe('AP_UNAVAILABLE');
    expect(error.message).toContain(`did not answer at ${closed.url}`);
  });

  it('with no plane running, the command opens the data dir and talks to that plane through an in-process client', async () => {
    const connection = await connect(folder());
    try {
      expect(connection.via).toBe('data dir');
      expect(await connection.call('plane.status', {})).toMatchObject({ host: 'headless', state: 'running' });
      const refused = await refusal(connection.call('runs.get', { runId: 'run-00000000000000000000' }));
      expect((refused as CommandFailed).code).toBe('AP_NOT_FOUND');
    } finally {
      await connection.close();
    }
  });
});
