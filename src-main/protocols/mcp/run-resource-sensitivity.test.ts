/**
 * A run resource is an egress to its MCP caller (docs/GOVERNED-RUNTIME.md, "Sensitivity"): a
 * caller's own run holding a value above the caller's ceiling is refused whole, naming the label,
 * where it is and the ceiling; within the ceiling it reads as before. A real plane, the real MCP
 * endpoint on 127.0.0.1, the SDK client.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { testPlane } from '../../../tests/support/runtime-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneMcpEndpoint } from '../../plane/mcp-endpoint';
import { silentLogger } from '../../base/logger';
import { CALM_AGENT, writeCalmAgent } from '../../../tests/support/calm-agent';
import type { SensitivityConfig } from '../../../src-shared/vocabulary/sensitivity';

const tempDir = useTempFolders('agentplane-mcp-sensitivity-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Calls the calm agent over MCP as `mcp:local` and reads its run back as a resource. */
async function readBack(config: SensitivityConfig): Promise<{ runId: string; read: Promise<unknown> }> {
  const dataDir = writeCalmAgent(tempDir());
  writeFileSync(join(dataDir, 'sensitivity.json'), JSON.stringify(config));
  const plane = await testPlane({ dataDir });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger, settleMs: 15_000 });
  cleanups.push(() => endpoint.close());
  const client = new Client({ name: 'sensitivity-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' as const } });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } } }));
  cleanups.push(() => client.close());
  const result = (await client.callTool({ name: CALM_AGENT, arguments: { text: 'the merger terms' } })) as { structuredContent: { runId: string } };
  const runId = result.structuredContent.runId;
  return { runId, read: client.readResource({ uri: `agentplane://runs/${runId}` }) };
}

describe('a run resource and its caller’s ceiling', () => {
  it('a run holding a value above the caller’s ceiling is refused whole, naming the label, where it is and the ceiling', { timeout: 60_000 }, async () => {
    const { runId, read } = await readBack({ destinations: { 'model:local': { result: 'confidential' }, 'mcp:local': { ceiling: 'internal' } } });
    const refused = await read.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).message).toContain(`agentplane://runs/${runId} holds a confidential value (the answer at step 0), above mcp:local's sensitivity ceiling internal; it is not sent`);
  });

  it('within the ceiling the run reads as before', { timeout: 60_000 }, async () => {
    const { runId, read } = await readBack({ destinations: { 'model:local': { result: 'confidential' }, 'mcp:local': { ceiling: 'confidential' } } });
    const body = JSON.parse(((await read) as { contents: Array<{ text: string }> }).contents[0]!.text) as { run: { runId: string }; records: Array<{ kind: string; body: { sensitivity?: string } }> };
    expect(body.run.runId).toBe(runId);
    expect(body.records.find((r) => r.kind === 'EffectDone')?.body.sensitivity).toBe('confidential');
  });
});
