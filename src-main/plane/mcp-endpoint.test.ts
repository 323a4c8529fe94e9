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
