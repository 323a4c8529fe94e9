// lint-as: src-main/journal/bad.lint-fixture.ts
// expect: src-main/journal sits below
import { createPlane } from '../plane/plane';
export const x = createPlane;
