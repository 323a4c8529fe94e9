// `npm test` and `npm run check`: every check the project has, with a non-zero exit when any
// failed. CI runs exactly this. Stages:
//   1. at once: build, typecheck (node side, web side, renderer code run in Node), lint and the
//      MCP test tools (installed when missing: scripts/mcp-tools.mjs). They read the sources and
//      write nothing another of them reads, so they share the cores instead of queueing for them
//      (about a minute and a half off a CI run); each one's output is printed whole when it ends.
//   2. the renderer's initial JavaScript against its budget (scripts/renderer-size.mjs)
//   3. unit tests  4. e2e  5. Electron security scan, one after the other (the tests need the
//      build and the tools, and the e2e browser wants the cores to itself).
// A failed stage does not stop the later ones: only a step that needs a failed one (the
// renderer's size and the tests need the build) is left out, and reported as not run (needs
// build). So a flaky unit test never hides what e2e and the security scan would have said.
// The last two lines (scripts/check-summary.mjs): which steps failed or did not run, or that all
// passed; then a plain `tests: N passed, N failed, N skipped` counted from vitest's reports.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closingLines, countReport, exitStatus, runStages } from './check-summary.mjs';

const reports = mkdtempSync(join(tmpdir(), 'agentplane-check-'));
const bin = (name) => join('node_modules', '.bin', name);
/** `needs`: steps it cannot run without (when they are part of this run); `report`: its vitest JSON report. */
const step = (name, command, args, more = {}) => ({ name, command, args, ...more });
const vitestStep = (project) => {
  const report = join(reports, `${project}.json`);
  return step(project, bin('vitest'), ['run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], { report });
};
const stages = [
  [
    step('build', bin('electron-vite'), ['build']),
    step('typecheck:node', bin('tsc'), ['-p', 'tsconfig.node.json', '--noEmit']),
    step('typecheck:web', bin('tsc'), ['-p', 'tsconfig.web.json', '--noEmit']),
    // The renderer's store run in Node beside a real plane (its tests, its benchmark): DOM and Node types together.
    step('typecheck:renderer-node', bin('tsc'), ['-p', 'tsconfig.renderer-node.json', '--noEmit']),
    step('lint', bin('eslint'), ['--max-warnings', '0', '.']),
    step('mcp-tools', process.execPath, ['scripts/mcp-tools.mjs']),
  ],
  // The renderer's initial JavaScript against its budget (docs/PERFORMANCE.md); it reads the build's output.
  [step('renderer-size', process.execPath, ['scripts/renderer-size.mjs'], { needs: ['build'] })],
  // Unit tests read the build too (the bundled agents, the renderer bundle's scan). Without the
  // MCP tools only the conformance test skips, and says so in the skipped count: not a need.
  [{ ...vitestStep('unit'), needs: ['build'] }],
  [{ ...vitestStep('e2e'), needs: ['build'] }],
  // It scans the sources, not the build.
  [step('security', process.execPath, ['scripts/electron-security.mjs'])],
];

const only = process.argv.slice(2);
const started = Date.now();
const unknown = only.filter((name) => !stages.flat().some((s) => s.name === name));
if (unknown.length > 0) {
  // Nothing run is not a pass.
  console.error(`no such step: ${unknown.join(', ')} (the steps: ${stages.flat().map((s) => s.name).join(', ')})`);
  process.exit(2);
}

/** A vitest step's counts from its JSON report (null when the runner wrote none); other steps have none. */
function countsOf(step) {
  if (!step.report) return null;
  try {
    return countReport(JSON.parse(readFileSync(step.report, 'utf8')));
  } catch {
    // A runner that crashed before writing its report has failed its step, which counts as one failure.
    return null;
  }
}

// The protocol suites append their scores here (tests/support/suite-score.ts); printed before the closing lines.
const suiteScores = join(reports, 'suite-scores.txt');
const env = { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0', AGENTPLANE_SUITE_SCORES: suiteScores };

/** One step alone, its output straight through. */
function runAlone({ name, command, args }) {
  const t0 = Date.now();
  console.log(`\n▶ ${name}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  return { name, status: result.status ?? 1, seconds: (Date.now() - t0) / 1000 };
}

/** One step beside others: its output kept and printed whole when it ends, so steps never interleave. */
function runBeside({ name, command, args }) {
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

const chosen = stages.map((stage) => stage.filter(({ name }) => only.length === 0 || only.includes(name)));
const results = await runStages(
  chosen,
  async (steps) => {
    const ran = steps.length === 1 ? [runAlone(steps[0])] : await Promise.all(steps.map(runBeside));
    for (const { name, status, seconds } of ran) {
      if (status === 0) console.log(`✔ ${name} (${seconds.toFixed(1)} s)`);
      else console.error(`\n✖ ${name} failed (${seconds.toFixed(1)} s)`);
    }
    return ran.map((r) => ({ ...r, counts: countsOf(steps.find((s) => s.name === r.name)) }));
  },
  ({ name, needs }) => console.error(`\n⊘ ${name} not run (needs ${needs}, which did not pass)`),
);
if (existsSync(suiteScores)) console.log(`\nprotocol suites:\n${readFileSync(suiteScores, 'utf8').trimEnd()}`);
const [verdict, tests] = closingLines(results, (Date.now() - started) / 1000);
console.log(`\n${verdict}`);
console.log(tests);
process.exit(exitStatus(results));
