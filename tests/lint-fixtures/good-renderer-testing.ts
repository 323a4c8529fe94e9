// lint-as: src-renderer/src/store/testing/good.lint-fixture.ts
// expect: nothing
import { mkdtempSync } from 'node:fs';
import { testPlane } from '../../../../tests/support/runtime-support';
export const x = [mkdtempSync, testPlane];
