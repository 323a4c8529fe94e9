// lint-as: src-shared/journal/bad.lint-fixture.ts
// expect: src-shared is pure: no Node built-ins
import { createHash } from 'node:crypto';
export const x = createHash;
