/**
 * The official MCP conformance suite's client scenarios, run against the plane's client pool
 * through tests/mcp-conformance/client-driver.ts (0.1.16 for 2025-11-25, 0.2.0-alpha.12 with
 * `--spec-version 2026-07-28`). The suites need Node 22 (fs.globSync), installed apart under
 * tools/mcp-conformance/ so it never becomes the project's `node`; the driver itself runs on the
 * Node running the tests.
 *
 * The scenarios that apply, all expected to pass: initialize and tools_call (2025); tools_call,
 * request-metadata, http-standard-headers, http-custom-headers, http-invalid-tool-headers,
 * json-schema-ref-no-deref and json-schema-2020-12-preservation (2026-07-28).
 *
 * The ones that do not apply, by design:
 * - elicitation-sep1034-client-defaults and sep-2322-client-request-state: the plane answers no
 *   elicitation, sampling or roots (no governed callback path for them; input_required is an
 *   error, not auto-fulfilled);
 * - sse-retry: its server settles on 2025-03-26, a version the plane refuses;
 * - auth/*: the plane sends the headers the user declared; it runs no OAuth flow.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE22, TOOLS_DIR } from '../../../../tests/doubles/everything-server';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const SUITE_2025 = join(TOOLS_DIR, 'conformance-2025', 'dist', 'index.js');
const SUITE_2026 = join(TOOLS_DIR, 'conformance-2026', 'dist', 'index.js');
const DRIVER = `${process.execPath} --import tsx tests/mcp-conformance/client-driver.ts`;
const installed = existsSync(NODE22) && existsSync(SUITE_2025) && existsSync(SUITE_2026);

function runScenario(suite: string, scenario: string, extra: string[] = []): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(NODE22, [suite, 'client', '--command', DRIVER, '--scenario', scenario, ...extra], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const cases: Array<[string, string, string[]]> = [
  ['2025-11-25', 'initialize', []],
  ['2025-11-25', 'tools_call', []],
  ...['tools_call', 'request-metadata', 'http-standard-headers', 'http-custom-headers', 'http-invalid-tool-headers', 'json-schema-ref-no-deref', 'json-schema-2020-12-preservation'].map(
    (s): [string, string, string[]] => ['2026-07-28', s, ['--spec-version', '2026-07-28']],
  ),
];

describe.skipIf(!installed).concurrent('MCP conformance client scenarios against the plane\'s client', () => {
  for (const [version, scenario, extra] of cases) {
    it(`${version} ${scenario} passes`, { timeout: 90_000 }, async () => {
      const { code, output } = await runScenario(version === '2025-11-25' ? SUITE_2025 : SUITE_2026, scenario, extra);
      expect(output).toMatch(/OVERALL: PASSED/);
      expect(output).toMatch(/Passed: (\d+)\/\1, 0 failed/);
      expect(code).toBe(0);
    });
  }
});
