// lint-as: src-shared/ipc/bad.lint-fixture.ts
// expect: src-shared imports nothing of ours
import { createPlane } from '../../src-main/plane/plane';
export const x = createPlane;
