// What `npm test` (scripts/check.mjs) decides and says, apart from the processes it starts, so
// tests/check-summary.test.ts can hold it to its word:
// - runStages: every stage runs, whatever failed before it; a step is left out only when a step
//   it needs (its `needs`, e.g. the build for the tests) failed or was itself not run, and is
//   then reported as `not run (needs X)`. A flaky unit test therefore never hides what e2e and
//   the security scan would have said.
// - countReport: passed, failed and skipped tests from one vitest JSON report.
// - closingLines: the last two lines: which steps failed or did not run (or that all passed),
//   then the plain `tests: N passed, N failed, N skipped` line CI parsers read, the same shape
//   whatever happened.

/**
 * @typedef {{ passed: number, failed: number, skipped: number }} Counts
 * @typedef {{ name: string, needs?: string[] }} Step
 * @typedef {{ name: string, status: number, seconds: number, counts?: Counts | null }} Ran
 * @typedef {{ name: string, outcome: 'passed' | 'failed' | 'not run', status: number, seconds: number, counts: Counts | null, needs?: string }} StepResult
 */

/** Counts from one vitest JSON report; zeros when there is none (a runner that crashed first). */
export function countReport(report) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  if (!report || typeof report !== 'object') return counts;
  counts.passed = report.numPassedTests ?? 0;
  counts.failed = report.numFailedTests ?? 0;
  // A test file that failed as a whole (it did not import, a hook threw) has no failed test in
  // it, yet it failed: it counts as one failure, so the closing line never reads 0 failed.
  for (const file of report.testResults ?? []) {
    const failedInFile = (file.assertionResults ?? []).filter((t) => t.status === 'failed').length;
    if (file.status === 'failed' && failedInFile === 0) counts.failed += 1;
  }
  counts.skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  return counts;
}

/**
 * Runs `stages` in order, each stage's runnable steps together through `run` (which resolves
 * to one `Ran` per step it was given). A step whose need failed or did not run is not given to
 * `run`; a need that is not among the stages (a step left out by `npm test -- unit`) is taken
 * as met. Resolves to every step's result, in stage order.
 *
 * @param {Step[][]} stages
 * @param {(steps: Step[]) => Promise<Ran[]>} run
 * @param {(result: StepResult) => void} [onNotRun] told of each step left out, as it is
 * @returns {Promise<StepResult[]>}
 */
export async function runStages(stages, run, onNotRun = () => undefined) {
  const outcomes = new Map();
  /** @type {StepResult[]} */
  const results = [];
  for (const stage of stages) {
    const ready = [];
    for (const step of stage) {
      const unmet = (step.needs ?? []).find((need) => outcomes.has(need) && outcomes.get(need) !== 'passed');
      if (unmet === undefined) {
        ready.push(step);
        continue;
      }
      const result = { name: step.name, outcome: 'not run', status: 0, seconds: 0, counts: null, needs: unmet };
      outcomes.set(step.name, 'not run');
      results.push(result);
      onNotRun(result);
    }
    if (ready.length === 0) continue;
    for (const ran of await run(ready)) {
      const outcome = ran.status === 0 ? 'passed' : 'failed';
      outcomes.set(ran.name, outcome);
      results.push({ name: ran.name, outcome, status: ran.status, seconds: ran.seconds, counts: ran.counts ?? null });
    }
  }
  return results;
}

/**
 * The test counts over every step: its tests' passed, failed and skipped, plus one failure for
 * each failed step whose failure no failed test already counts (lint, the build, a runner that
 * crashed or failed on an unhandled error with every test passing). A failed run never reads
 * 0 failed.
 *
 * @param {StepResult[]} results
 * @returns {Counts}
 */
export function totals(results) {
  const sum = { passed: 0, failed: 0, skipped: 0 };
  for (const result of results) {
    if (result.counts) {
      sum.passed += result.counts.passed;
      sum.failed += result.counts.failed;
      sum.skipped += result.counts.skipped;
    }
    if (result.outcome === 'failed' && !(result.counts && result.counts.failed > 0)) sum.failed += 1;
  }
  return sum;
}

/**
 * The closing lines: first which steps failed and which did not run and why (or that all
 * passed), then `tests: N passed, N failed, N skipped`, always last, always all three counts.
 *
 * @param {StepResult[]} results
 * @param {number} seconds
 * @returns {[string, string]}
 */
export function closingLines(results, seconds) {
  const { passed, failed, skipped } = totals(results);
  const tests = `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`;
  const failedSteps = results.filter((r) => r.outcome === 'failed').map((r) => r.name);
  const notRun = results.filter((r) => r.outcome === 'not run').map((r) => `${r.name} (needs ${r.needs})`);
  const time = `${seconds.toFixed(1)} s`;
  if (failedSteps.length === 0 && notRun.length === 0) return [`all checks passed in ${time}`, tests];
  const parts = [];
  if (failedSteps.length > 0) parts.push(`failed: ${failedSteps.join(', ')}`);
  if (notRun.length > 0) parts.push(`not run: ${notRun.join(', ')}`);
  return [`checks did not pass in ${time}; ${parts.join('; ')}`, tests];
}

/** The exit status: 0 when every step passed, else the first failed step's (1 if that was 0). */
export function exitStatus(results) {
  const failed = results.find((r) => r.outcome === 'failed');
  if (failed) return failed.status || 1;
  return results.some((r) => r.outcome === 'not run') ? 1 : 0;
}
