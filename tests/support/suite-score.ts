/**
 * A protocol suite's score (MCP conformance, the A2A TCK, ACP), said twice: on the test's own
 * output, and appended to the file `npm test` names in AGENTPLANE_SUITE_SCORES, which
 * scripts/check.mjs prints together just before its closing lines, so the scores are read in the
 * test summary rather than searched for in a unit run's output.
 */
import { appendFileSync } from 'node:fs';

export const SUITE_SCORES_ENV = 'AGENTPLANE_SUITE_SCORES';

export function reportSuiteScore(line: string): void {
  console.log(line);
  const file = process.env[SUITE_SCORES_ENV];
  if (file) appendFileSync(file, `${line.replace(/\s+/g, ' ').trim()}\n`);
}
