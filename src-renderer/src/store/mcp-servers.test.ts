/**
 * The MCP slice against a real plane: the endpoint and the declared servers read through the
 * contract; a real stdio MCP server (the official server-everything, run by `node`) added,
 * connected (its tools listed), disconnected and removed from the store's actions; the plane's
 * refusals (a name declared twice) and a server that cannot start come back in their own words;
 * reads do not pile up. Requests are counted where they leave the store's client.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandName } from '../../../src-shared/ipc/contract';
import { useSyncedHarnesses } from './testing/store-harness';

const harness = useSyncedHarnesses();

const EVERYTHING = resolve(import.meta.dirname, '../../../tools/mcp-conformance/node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const count = (requests: CommandName[], name: CommandName) => requests.filter((r) => r === name).length;
const SECRET = 'sk-test-never-shown-0123';

describe('the MCP slice, against a real plane and a real MCP server', () => {
  it('reads the endpoint and the (empty) list; concurrent refreshes cost one more read, not one each', async () => {
    const h = await harness();
    const before = h.wire.requests.length;
    await Promise.all([h.store.getState().refreshMcp(), h.store.getState().refreshMcp(), h.store.getState().refreshMcp()]);
    const sent = h.wire.requests.slice(before);
    expect(count(sent, 'mcp.servers.list')).toBe(2);
    expect(count(sent, 'mcp.endpoint')).toBe(2);
    const s = h.store.getState();
    expect(s.mcpError).toBeNull();
    expect(s.mcpLoaded).toBe(true);
    expect(s.mcpServers).toEqual([]);
    expect(s.mcpEndpoint?.stdioCommand.length).toBeGreaterThan(0);
    expect(s.mcpEndpoint?.versions).toContain('2026-07-28');
  });

  it('adds server-everything over stdio, connects (tools listed), disconnects and removes it; env values never reach the store', async () => {
    expect(existsSync(EVERYTHING), `${EVERYTHING} (tools/mcp-conformance is installed)`).toBe(true);
    const h = await harness();
    const added = await h.store.getState().addMcpServer({ name: 'everything', config: { transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: { EVERYTHING_TOKEN: SECRET } } });
    expect(added.ok, added.ok ? '' : added.error.message).toBe(true);
    let server = h.store.getState().mcpServers.find((x) => x.name === 'everything');
    expect(server?.envNames).toEqual(['EVERYTHING_TOKEN']);
    expect(JSON.stringify(h.store.getState().mcpServers)).not.toContain(SECRET);

    const connected = await h.store.getState().mcpServerAction('everything', 'connect');
    expect(connected, JSON.stringify(h.store.getState().mcpServers)).toBe(true);
    server = h.store.getState().mcpServers.find((x) => x.name === 'everything');
    expect(server?.state).toBe('connected');
    expect(server?.negotiatedVersion).toBeTruthy();
    expect(server?.serverInfo?.name).toBe('mcp-servers/everything');
    expect(server?.tools?.map((t) => t.name)).toContain('echo');
    expect(h.store.getState().announcement.text).toBe('Connected to the MCP server everything.');
    expect(JSON.stringify(h.store.getState())).not.toContain(SECRET);

    expect(await h.store.getState().mcpServerAction('everything', 'disconnect')).toBe(true);
    expect(h.store.getState().mcpServers.find((x) => x.name === 'everything')?.state).toBe('disconnected');

    expect(await h.store.getState().mcpServerAction('everything', 'remove')).toBe(true);
    expect(h.store.getState().mcpServers).toEqual([]);
    await h.settle();
    // The follow-up read agrees with what the action's answer put in place.
    expect(h.store.getState().mcpServers).toEqual([]);
  }, 60_000);

  it('shows the plane’s refusal of a name declared twice, and a server that cannot start fails in its own words', async () => {
    const h = await harness();
    const config = { transport: 'stdio' as const, command: process.execPath, args: ['-e', 'console.error("no config file at /nowhere"); process.exit(3)'], env: {} };
    expect((await h.store.getState().addMcpServer({ name: 'crashy', config })).ok).toBe(true);
    const again = await h.store.getState().addMcpServer({ name: 'crashy', config });
    expect(again.ok).toBe(false);
    if (!again.ok) expect(again.error.message).toMatch(/crashy/);

    expect(await h.store.getState().mcpServerAction('crashy', 'connect')).toBe(false);
    const server = h.store.getState().mcpServers.find((x) => x.name === 'crashy');
    expect(server?.state).toBe('failed');
    expect(server?.error).toBeTruthy();
    // A failed connection is the server's answer (in its view), not the plane refusing the command.
    expect(h.store.getState().mcpActionErrors.crashy).toBeUndefined();
    expect(h.store.getState().announcement.text).toMatch(/^Could not connect to the MCP server crashy: /);
    // What it wrote to stderr before dying is kept for the page (its own account of the failure).
    expect(JSON.stringify(server?.stderrTail ?? []) + (server?.error ?? '')).toContain('no config file');
  }, 30_000);

  it('a command the plane refuses (an unknown server) is kept beside that server', async () => {
    const h = await harness();
    expect(await h.store.getState().mcpServerAction('ghost', 'connect')).toBe(false);
    expect(h.store.getState().mcpActionErrors.ghost).toMatch(/ghost/);
    expect(h.store.getState().mcpBusy.ghost).toBeUndefined();
  });
});
