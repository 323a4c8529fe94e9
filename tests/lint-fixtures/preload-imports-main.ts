// lint-as: src-preload/bad.lint-fixture.ts
// expect: the preload imports only src-shared of ours
import { createPlane } from '../src-main/plane/plane';
export const x = createPlane;
