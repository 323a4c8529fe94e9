// lint-as: src-preload/bad.lint-fixture.ts
// expect: the preload is sandboxed
import { readFileSync } from 'node:fs';
export const x = readFileSync;
