// `npm test` and `npm run check`: every check the project has, stopping at the first failing
// stage with a non-zero exit. CI runs exactly this. Stages:
//   1. at once: build, typecheck (node side, web side, renderer code run in Node), lint and the
//      MCP test tools (installed when missing: scripts/mcp-tools.mjs). They read the sources and
//      write nothing another of them reads, so they share the cores instead of queueing for them
//      (about a minute and a half off a CI run); each one's output is printed whole when it ends.
//   2. the renderer's initial JavaScript against its budget (scripts/renderer-size.mjs)
//   3. unit tests  4. e2e  5. Electron security scan, one after the other (the tests need the
//      build and the tools, and the e2e browser wants the cores to itself).
// The last line is a plain `tests: N passed, N failed` summary counted from vitest's reports.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const reports = mkdtempSync(join(tmpdir(), 'agentplane-check-'));
const bin = (name) => join('node_modules', '.bin', name);
const stages = [
  [
    ['build', bin('electron-vite'), ['build']],
    ['typecheck:node', bin('tsc'), ['-p', 'tsconfig.node.json', '--noEmit']],
    ['typecheck:web', bin('tsc'), ['-p', 'tsconfig.web.json', '--noEmit']],
    // The renderer's store run in Node beside a real plane (its tests, its benchmark): DOM and Node types together.
    ['typecheck:renderer-node', bin('tsc'), ['-p', 'tsconfig.renderer-node.json', '--noEmit']],
    ['lint', bin('eslint'), ['--max-warnings', '0', '.']],
    ['mcp-tools', process.execPath, ['scripts/mcp-tools.mjs']],
  ],
  // The renderer's initial JavaScript against its budget (issue 16); it reads the build's output.
  [['renderer-size', process.execPath, ['scripts/renderer-size.mjs']]],
  [['unit', bin('vitest'), ['run', '--project', 'unit', '--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, 'unit.json')}`]]],
  [['e2e', bin('vitest'), ['run', '--project', 'e2e', '--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, 'e2e.json')}`]]],
  [['security', process.execPath, ['scripts/electron-security.mjs']]],
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

const env = { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' };

/** One step alone, its output straight through. */
function runAlone([name, command, args]) {
  const t0 = Date.now();
  console.log(`\n▶ ${name}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  return { name, status: result.status ?? 1, seconds: (Date.now() - t0) / 1000 };
}

/** One step beside others: its output kept and printed whole when it ends, so steps never interleave. */
function runBeside([name, command, args]) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    const done = (status) => {
      console.log(`\n▶ ${name}`);
      process.stdout.write(Buffer.concat(chunks));
      resolve({ name, status, seconds: (Date.now() - t0) / 1000 });
    };
    child.on('error', (error) => {
      chunks.push(Buffer.from(`${error.message}\n`));
      done(1);
    });
    child.on('close', (code) => done(code ?? 1));
  });
}

for (const stage of stages) {
  const chosen = stage.filter(([name]) => only.length === 0 || only.includes(name));
  if (chosen.length === 0) continue;
  const results = chosen.length === 1 ? [runAlone(chosen[0])] : await Promise.all(chosen.map(runBeside));
  for (const { name } of results) {
    if (name === 'unit') countReport(join(reports, 'unit.json'));
    if (name === 'e2e') countReport(join(reports, 'e2e.json'));
  }
  for (const { name, status, seconds } of results) {
    if (status === 0) console.log(`✔ ${name} (${seconds.toFixed(1)} s)`);
    else console.error(`\n✖ ${name} failed (${seconds.toFixed(1)} s)`);
  }
  const failure = results.find((r) => r.status !== 0);
  if (failure) {
    console.log(`tests: ${passed} passed, ${Math.max(failed, 1)} failed`);
    process.exit(failure.status);
  }
}
console.log(`\nall checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
