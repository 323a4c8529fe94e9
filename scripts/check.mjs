// `npm test` and `npm run check`: every check the project has, in order, stopping at the first
// failure with a non-zero exit. CI runs exactly this. Steps:
//   build → typecheck (node side, web side, renderer code run in Node) → lint → the MCP test tools
//   (installed when missing: scripts/mcp-tools.mjs) → unit tests → e2e → Electron security scan
// The last line is a plain `tests: N passed, N failed` summary counted from vitest's reports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const reports = mkdtempSync(join(tmpdir(), 'agentplane-check-'));
const bin = (name) => join('node_modules', '.bin', name);
const steps = [
  ['build', bin('electron-vite'), ['build']],
  ['typecheck:node', bin('tsc'), ['-p', 'tsconfig.node.json', '--noEmit']],
  ['typecheck:web', bin('tsc'), ['-p', 'tsconfig.web.json', '--noEmit']],
  // The renderer's store run in Node beside a real plane (its tests, its benchmark): DOM and Node types together.
  ['typecheck:renderer-node', bin('tsc'), ['-p', 'tsconfig.renderer-node.json', '--noEmit']],
  ['lint', bin('eslint'), ['--max-warnings', '0', '.']],
  ['mcp-tools', process.execPath, ['scripts/mcp-tools.mjs']],
  ['unit', bin('vitest'), ['run', '--project', 'unit', '--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, 'unit.json')}`]],
  ['e2e', bin('vitest'), ['run', '--project', 'e2e', '--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, 'e2e.json')}`]],
  ['security', process.execPath, ['scripts/electron-security.mjs']],
];

const only = process.argv.slice(2);
const started = Date.now();
let passed = 0;
let failed = 0;
let skipped = 0;

function countReport(file) {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    // A test file that failed as a whole (it did not import, a hook threw) has no failed test
    // in it, yet it failed: it counts as one failure, so the closing line never reads 0 failed.
    for (const file of report.testResults ?? []) {
      const failedInFile = (file.assertionResults ?? []).filter((t) => t.status === 'failed').length;
      if (file.status === 'failed' && failedInFile === 0) failed += 1;
    }
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  } catch {
    // A runner that crashed before writing its report has already failed its step.
  }
}

for (const [name, command, args] of steps) {
  if (only.length > 0 && !only.includes(name)) continue;
  const t0 = Date.now();
  console.log(`\n▶ ${name}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } });
  if (name === 'unit') countReport(join(reports, 'unit.json'));
  if (name === 'e2e') countReport(join(reports, 'e2e.json'));
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (result.status !== 0) {
    console.error(`\n✖ ${name} failed (${seconds} s)`);
    console.log(`tests: ${passed} passed, ${Math.max(failed, 1)} failed`);
    process.exit(result.status ?? 1);
  }
  console.log(`✔ ${name} (${seconds} s)`);
}
console.log(`\nall checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
