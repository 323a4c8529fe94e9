// lint-as: src-main/bridge/bad.lint-fixture.ts
// expect: src-main/bridge sits below
import { runCli } from '../cli/program';
export const x = runCli;
