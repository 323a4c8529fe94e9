/**
 * The `mcp.servers.*` commands through the contract client, as the UI and the CLI reach them:
 * a real plane on a temporary data dir, server-everything over stdio.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../../../tests/support/journal-support';
import { call, failure, testPlane } from '../../../../tests/support/runtime-support';
import { everythingStdio, misbehavingStdio } from '../../../../tests/doubles/everything-server';
import type { Plane } from '../../../plane/plane';
import { mcpServersFilePath } from './mcp-servers-file';

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

async function plane(dataDir = tempDataDir('ap-mcp-commands-')): Promise<Plane> {
  const p = await testPlane({ dataDir, agents: [] });
  planes.push(p);
  return p;
}

describe('mcp.servers.* commands', () => {
  it('add, list (which never connects), connect, disconnect, remove', async () => {
    const p = await plane();
    expect(await call(p, 'mcp.servers.list', {})).toEqual({ servers: [] });
    const added = await call(p, 'mcp.servers.add', { name: 'everything', config: { ...everythingStdio(), env: { API_TOKEN: 'secret-value-123' } } });
    expect(added).toMatchObject({ name: 'everything', transport: 'stdio', state: 'disconnected', envNames: ['API_TOKEN'] });
    expect(JSON.stringify(added)).not.toContain('secret-value-123');
    expect(await failure(p, 'mcp.servers.add', { name: 'everything', config: everythingStdio() })).toMatchObject({ code: 'AP_CONFLICT', message: expect.stringContaining('already declared') });

    expect((await call(p, 'mcp.servers.list', {})).servers).toEqual([expect.objectContaining({ name: 'everything', state: 'disconnected' })]);
    const connected = await call(p, 'mcp.servers.connect', { name: 'everything' });
    expect(connected).toMatchObject({ state: 'connected', negotiatedVersion: '2025-11-25' });
    expect(connected.tools?.map((t) => t.name)).toContain('echo');
    expect(JSON.stringify(connected)).not.toContain('secret-value-123');
    expect((await call(p, 'mcp.servers.list', {})).servers[0]).toMatchObject({ state: 'connected', negotiatedVersion: '2025-11-25' });

    expect(await call(p, 'mcp.servers.disconnect', { name: 'everything' })).toMatchObject({ state: 'disconnected' });
    expect(await call(p, 'mcp.servers.remove', { name: 'everything' })).toEqual({ removed: true });
    expect(await call(p, 'mcp.servers.remove', { name: 'everything' })).toEqual({ removed: false });
    expect(await call(p, 'mcp.servers.list', {})).toEqual({ servers: [] });
  });

  it('a server that cannot be reached is a failed view with its error, not a refused command', async () => {
    const p = await plane();
    await call(p, 'mcp.servers.add', { name: 'missing', config: { transport: 'stdio', command: '/nonexistent/mcp-server', args: [], env: {} } });
    const view = await call(p, 'mcp.servers.connect', { name: 'missing' });
    expect(view).toMatchObject({ state: 'failed', error: expect.stringMatching(/cannot (start|connect to) missing: .*ENOENT/) });
    await call(p, 'mcp.servers.add', { name: 'ancient', config: misbehavingStdio('old') });
    expect(await call(p, 'mcp.servers.connect', { name: 'ancient' })).toMatchObject({ state: 'failed', error: expect.stringContaining('2024-11-05') });
    expect(await failure(p, 'mcp.servers.connect', { name: 'ghost' })).toMatchObject({ code: 'AP_NOT_FOUND' });
  });

  it('refuses a bad name or config (the contract names the field), and a malformed file (naming it; left untouched)', async () => {
    const dataDir = tempDataDir('ap-mcp-commands-');
    const p = await plane(dataDir);
    expect(await failure(p, 'mcp.servers.add', { name: 'Not A Name', config: everythingStdio() })).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringContaining('name') });
    expect(await failure(p, 'mcp.servers.add', { name: 'web', config: { transport: 'http', url: 'ftp://example.com/mcp', headers: {} } })).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringContaining('config.url') });
    const bad = '{"servers": {"web": {"transport": "http", "url": "not a url"}}}';
    writeFileSync(mcpServersFilePath(dataDir), bad);
    expect(await failure(p, 'mcp.servers.list', {})).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/mcp-servers\.json: servers\.web\.url: /) });
    expect(await failure(p, 'mcp.servers.add', { name: 'other', config: everythingStdio() })).toMatchObject({ code: 'AP_BAD_REQUEST' });
    expect(readFileSync(mcpServersFilePath(dataDir), 'utf8')).toBe(bad);
  });
});
