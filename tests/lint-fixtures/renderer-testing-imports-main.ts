// lint-as: src-renderer/src/store/testing/bad.lint-fixture.ts
// expect: renderer tests reach the plane through tests/support and the contract client
import { createPlane } from '../../../../src-main/plane/plane';
export const x = createPlane;
