// Types of check-summary.mjs (plain JavaScript, so `npm test` runs it with Node alone), for tests/check-summary.test.ts.
export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}
export interface Step {
  name: string;
  needs?: string[];
}
export interface Ran {
  name: string;
  status: number;
  seconds: number;
  counts?: Counts | null;
}
export interface StepResult {
  name: string;
  outcome: 'passed' | 'failed' | 'not run';
  status: number;
  seconds: number;
  counts: Counts | null;
  needs?: string;
}
export function countReport(report: unknown): Counts;
export function runStages<S extends Step>(stages: S[][], run: (steps: S[]) => Promise<Ran[]>, onNotRun?: (result: StepResult) => void): Promise<StepResult[]>;
export function totals(results: StepResult[]): Counts;
export function closingLines(results: StepResult[], seconds: number): [string, string];
export function exitStatus(results: StepResult[]): number;
