/**
 * `npm test` (scripts/check.mjs) tells the whole truth: a failing stage does not stop the stages
 * that can run without it (a flaky unit test must not hide what e2e and the security scan say),
 * a stage that cannot run is named as not run and why, and the closing line always carries the
 * passed, failed and skipped counts, in the plain shape CI parsers read.
 *
 * The pure part (scripts/check-summary.mjs) is tested directly; check.mjs itself is run for real
 * against stand-ins for every tool it starts (a temporary folder as its working directory, with
 * node_modules/.bin and scripts/ holding stubs that pass, or fail when named in CHECK_STUB_FAIL).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closingLines, countReport, exitStatus, runStages, type Ran, type Step, type StepResult } from '../scripts/check-summary.mjs';
import { useTempFolders } from './helpers/temp-folders';

const ROOT = join(import.meta.dirname, '..');
const tempDir = useTempFolders('agentplane-check-summary-');

/** What CI parsers read: one word and a colon, then `N passed, N failed`, optionally `, N skipped`, alone on the last line. */
const PARSEABLE = /^\w+: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/;

const ran = (name: string, status: number, counts?: Ran['counts']): Ran => ({ name, status, seconds: 1, ...(counts !== undefined ? { counts } : {}) });

describe('countReport', () => {
  it('counts passed, failed and skipped (pending and todo), and a file that failed as a whole as one failure', () => {
    const report = {
      numPassedTests: 7,
      numFailedTests: 2,
      numPendingTests: 3,
      numTodoTests: 1,
      testResults: [
        { status: 'failed', assertionResults: [{ status: 'failed' }, { status: 'failed' }] },
        { status: 'failed', assertionResults: [] },
        { status: 'passed', assertionResults: [{ status: 'passed' }] },
      ],
    };
    expect(countReport(report)).toEqual({ passed: 7, failed: 3, skipped: 4 });
  });

  it('counts nothing for a runner that wrote no report', () => {
    expect(countReport(null)).toEqual({ passed: 0, failed: 0, skipped: 0 });
  });
});

describe('runStages', () => {
  const STAGES: Step[][] = [
    [{ name: 'build' }, { name: 'typecheck' }, { name: 'lint' }],
    [{ name: 'unit', needs: ['build'] }],
    [{ name: 'e2e', needs: ['build'] }],
    [{ name: 'security' }],
  ];

  async function runWith(failing: string[]): Promise<{ results: StepResult[]; started: string[] }> {
    const started: string[] = [];
    const results = await runStages(STAGES, async (steps) => {
      started.push(...steps.map((s) => s.name));
      return steps.map((s) => ran(s.name, failing.includes(s.name) ? 1 : 0));
    });
    return { results, started };
  }

  it('goes on after a failed unit stage: e2e and the security scan still run', async () => {
    const { results, started } = await runWith(['unit']);
    expect(started).toEqual(['build', 'typecheck', 'lint', 'unit', 'e2e', 'security']);
    expect(results.map((r) => [r.name, r.outcome])).toEqual([
      ['build', 'passed'],
      ['typecheck', 'passed'],
      ['lint', 'passed'],
      ['unit', 'failed'],
      ['e2e', 'passed'],
      ['security', 'passed'],
    ]);
    expect(exitStatus(results)).toBe(1);
  });

  it('leaves out only what needs a failed step, and says what it needed', async () => {
    const { results, started } = await runWith(['build']);
    expect(started).toEqual(['build', 'typecheck', 'lint', 'security']);
    expect(results.filter((r) => r.outcome === 'not run').map((r) => [r.name, r.needs])).toEqual([
      ['unit', 'build'],
      ['e2e', 'build'],
    ]);
  });

  it('does not let a lint or typecheck failure stop the tests', async () => {
    const { started } = await runWith(['lint', 'typecheck']);
    expect(started).toEqual(['build', 'typecheck', 'lint', 'unit', 'e2e', 'security']);
  });

  it('leaves out a step whose need was itself not run', async () => {
    const results = await runStages(
      [[{ name: 'build' }], [{ name: 'unit', needs: ['build'] }], [{ name: 'report', needs: ['unit'] }]],
      async (steps) => steps.map((s) => ran(s.name, 1)),
    );
    expect(results.map((r) => [r.name, r.outcome, r.needs])).toEqual([
      ['build', 'failed', undefined],
      ['unit', 'not run', 'build'],
      ['report', 'not run', 'unit'],
    ]);
  });

  it('takes a need left out of this run (`npm test -- unit`) as met', async () => {
    const results = await runStages([[{ name: 'unit', needs: ['build'] }]], async (steps) => steps.map((s) => ran(s.name, 0)));
    expect(results.map((r) => r.outcome)).toEqual(['passed']);
    expect(exitStatus(results)).toBe(0);
  });
});

describe('closingLines', () => {
  const result = (name: string, outcome: StepResult['outcome'], counts: StepResult['counts'] = null, needs?: string): StepResult => ({
    name,
    outcome,
    status: outcome === 'failed' ? 1 : 0,
    seconds: 1,
    counts,
    ...(needs ? { needs } : {}),
  });

  it('when everything passed: says so, then every count, skipped included even at 0', () => {
    const lines = closingLines([result('build', 'passed'), result('unit', 'passed', { passed: 10, failed: 0, skipped: 0 }), result('e2e', 'passed', { passed: 5, failed: 0, skipped: 0 })], 12.34);
    expect(lines).toEqual(['all checks passed in 12.3 s', 'tests: 15 passed, 0 failed, 0 skipped']);
    expect(lines[1]).toMatch(PARSEABLE);
  });

  it('when the unit stage failed: names it, and keeps the skipped count and the later stages\' tests', () => {
    const lines = closingLines(
      [result('build', 'passed'), result('unit', 'failed', { passed: 900, failed: 1, skipped: 4 }), result('e2e', 'passed', { passed: 60, failed: 0, skipped: 2 }), result('security', 'passed')],
      100,
    );
    expect(lines[0]).toBe('checks did not pass in 100.0 s; failed: unit');
    expect(lines[1]).toBe('tests: 960 passed, 1 failed, 6 skipped');
    expect(lines[1]).toMatch(PARSEABLE);
    // The verdict line must not be taken for the counts.
    expect(lines[0]).not.toMatch(/\d+ passed, \d+ failed/);
  });

  it('names what did not run and what it needed, and counts a failed step with no failed test as one failure', () => {
    const lines = closingLines([result('build', 'failed'), result('lint', 'failed'), result('unit', 'not run', null, 'build'), result('e2e', 'not run', null, 'build'), result('security', 'passed')], 5);
    expect(lines[0]).toBe('checks did not pass in 5.0 s; failed: build, lint; not run: unit (needs build), e2e (needs build)');
    expect(lines[1]).toBe('tests: 0 passed, 2 failed, 0 skipped');
  });

  it('counts a test runner that failed with every test passing (an unhandled error, no report) as one failure', () => {
    expect(closingLines([result('unit', 'failed', { passed: 3, failed: 0, skipped: 1 })], 1)[1]).toBe('tests: 3 passed, 1 failed, 1 skipped');
    expect(closingLines([result('unit', 'failed', null)], 1)[1]).toBe('tests: 0 passed, 1 failed, 0 skipped');
  });
});

/**
 * check.mjs for real, each tool it starts replaced by a stub that prints its name, writes a
 * vitest JSON report where asked for one (3 passed, 1 skipped; 1 failed more when failing) and
 * exits 1 when named in CHECK_STUB_FAIL.
 */
async function runCheck(failing: string[]): Promise<{ code: number | null; stdout: string; ran: string[] }> {
  const dir = tempDir();
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  mkdirSync(join(dir, 'scripts'));
  const stub = join(dir, 'stub.mjs');
  writeFileSync(
    stub,
    `import { writeFileSync } from 'node:fs';
const [tool, ...args] = process.argv.slice(2);
const project = args[args.indexOf('--project') + 1];
const config = args[args.indexOf('-p') + 1];
const name = { 'electron-vite': 'build', eslint: 'lint', vitest: project, tsc: 'typecheck:' + String(config).replace(/^tsconfig\\.|\\.json$/g, '') }[tool] ?? tool;
const fail = (process.env.CHECK_STUB_FAIL ?? '').split(',').includes(name);
console.log('STUB RAN ' + name);
const report = args.find((a) => a.startsWith('--outputFile.json='));
if (report) writeFileSync(report.slice('--outputFile.json='.length), JSON.stringify({ numPassedTests: 3, numFailedTests: fail ? 1 : 0, numPendingTests: 1, numTodoTests: 0, testResults: [] }));
process.exit(fail ? 1 : 0);
`,
  );
  for (const tool of ['electron-vite', 'tsc', 'eslint', 'vitest']) {
    const bin = join(dir, 'node_modules', '.bin', tool);
    writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${stub}" ${tool} "$@"\n`);
    chmodSync(bin, 0o755);
  }
  for (const [script, name] of [['mcp-tools.mjs', 'mcp-tools'], ['renderer-size.mjs', 'renderer-size'], ['electron-security.mjs', 'security']]) {
    writeFileSync(join(dir, 'scripts', script!), `process.argv.splice(2, 0, ${JSON.stringify(name)});\nawait import(${JSON.stringify(`file://${stub}`)});\n`);
  }
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'check.mjs')], { cwd: dir, env: { ...process.env, CHECK_STUB_FAIL: failing.join(',') }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  // stderr (the ✖ and ⊘ lines) is drained but kept apart: two pipes arrive in no fixed order.
  child.stderr.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  return { code, stdout, ran: [...stdout.matchAll(/^STUB RAN (\S+)$/gm)].map((m) => m[1]!) };
}

describe('scripts/check.mjs', () => {
  it('runs e2e and the security scan after the unit stage failed, names the failure, exits non-zero, and keeps every count', async () => {
    const { code, stdout, ran: steps } = await runCheck(['unit']);
    expect(code).not.toBe(0);
    expect(steps).toEqual(expect.arrayContaining(['build', 'lint', 'renderer-size', 'unit', 'e2e', 'security']));
    const lines = stdout.trimEnd().split('\n');
    expect(lines.at(-2)).toMatch(/^checks did not pass in [\d.]+ s; failed: unit$/);
    expect(lines.at(-1)).toBe('tests: 6 passed, 1 failed, 2 skipped');
    expect(lines.at(-1)).toMatch(PARSEABLE);
  }, 60_000);

  it('reports the tests as not run when the build failed, and still runs lint, typecheck and the security scan', async () => {
    const { code, stdout, ran: steps } = await runCheck(['build']);
    expect(code).not.toBe(0);
    expect(steps).toEqual(expect.arrayContaining(['build', 'typecheck:node', 'lint', 'mcp-tools', 'security']));
    expect(steps).not.toContain('unit');
    expect(steps).not.toContain('e2e');
    const lines = stdout.trimEnd().split('\n');
    expect(lines.at(-2)).toMatch(/failed: build; not run: renderer-size \(needs build\), unit \(needs build\), e2e \(needs build\)$/);
    expect(lines.at(-1)).toBe('tests: 0 passed, 1 failed, 0 skipped');
  }, 60_000);

  it('passes with every count when every stage passes', async () => {
    const { code, stdout } = await runCheck([]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.at(-2)).toMatch(/^all checks passed in [\d.]+ s$/);
    expect(lines.at(-1)).toBe('tests: 6 passed, 0 failed, 2 skipped');
  }, 60_000);
});
