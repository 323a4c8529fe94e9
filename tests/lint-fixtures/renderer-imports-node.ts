// lint-as: src-renderer/src/store/bad.lint-fixture.ts
// expect: Node-only modules never reach the renderer bundle
import { readFileSync } from 'node:fs';
export const x = readFileSync;
