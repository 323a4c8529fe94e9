/**
 * The plane's MCP endpoint as the plane reports it (`mcp.endpoint`) and as plane.json carries it
 * for `agentplane mcp --stdio`: a URL and token only while it serves, the token's file private,
 * and a plane.json naming a non-loopback MCP URL refused (the relay would send it the token).
 */
import { describe, expect, it, afterEach } from 'vitest';
import { call, testPlane } from '../../tests/support/runtime-support';
import { useTempFolders, useUmask } from '../../tests/helpers/temp-folders';
import { silentLogger } from '../base/logger';
import { startPlaneMcpEndpoint } from './mcp-endpoint';
import { readTrustedPlaneFile, UntrustedPlaneFileError, writePlaneFile } from './plane-file';

const folder = useTempFolders('ap-mcp-endpoint-');
useUmask(0o022);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('mcp.endpoint', () => {
  it('names the URL and token while the endpoint serves, and neither after it closes', async () => {
    const dataDir = folder();
    const plane = await testPlane({ dataDir });
    cleanups.push(() => plane.close());
    const before = await call(plane, 'mcp.endpoint', {});
    expect(before).toMatchObject({ url: null, token: null, versions: ['2026-07-28', '2025-11-25'], stdioCommand: ['agentplane', 'mcp', '--stdio', '--data-dir', dataDir] });
    expect(before.tools).toEqual(expect.arrayContaining(['summarize', 'write-note', 'ask-first']));
    const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
    expect(await call(plane, 'mcp.endpoint', {})).toMatchObject({ url: endpoint.url, token: endpoint.token });
    await endpoint.close();
    expect(await call(plane, 'mcp.endpoint', {})).toMatchObject({ url: null, token: null });
  });
});

describe('the plane\'s MCP endpoint as an OAuth protected resource (RFC 9728)', () => {
  it('describes itself at the well-known URI as a resource taking a bearer token, with no authorization server, and a 401 points there', async () => {
    const dataDir = folder();
    const plane = await testPlane({ dataDir });
    cleanups.push(() => plane.close());
    const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
    cleanups.push(() => endpoint.close());
    const metadataUrl = `http://127.0.0.1:${endpoint.port}/.well-known/oauth-protected-resource/mcp`;
    const refused = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: endpoint.url, bearer_methods_supported: ['header'] });
    expect(metadata.authorization_servers).toBeUndefined();
    expect(JSON.stringify(metadata)).not.toContain(endpoint.token);
    const root = (await (await fetch(`http://127.0.0.1:${endpoint.port}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
    expect(root.resource).toBe(endpoint.url);
  });
});

describe.runIf(process.platform !== 'win32')('plane.json with an MCP endpoint', () => {
  const base = { pid: process.pid, url: 'http://127.0.0.1:4567', port: 4567, token: 'secret-token', startedAt: '2026-01-01T00:00:00.000Z' };

  it('carries the MCP URL and token for the stdio relay', () => {
    const dir = folder();
    writePlaneFile(dir, { ...base, mcpUrl: 'http://127.0.0.1:4568/mcp', mcpToken: 'mcp-token' });
    expect(readTrustedPlaneFile(dir)).toMatchObject({ mcpUrl: 'http://127.0.0.1:4568/mcp', mcpToken: 'mcp-token' });
  });

  it('is refused when its MCP URL is not loopback, naming the URL', () => {
    const dir = folder();
    writePlaneFile(dir, { ...base, mcpUrl: 'http://evil.example:80/mcp', mcpToken: 'mcp-token' });
    expect(() => readTrustedPlaneFile(dir)).toThrow(UntrustedPlaneFileError);
    expect(() => readTrustedPlaneFile(dir)).toThrow(/evil\.example.*MCP endpoint/);
  });
});
