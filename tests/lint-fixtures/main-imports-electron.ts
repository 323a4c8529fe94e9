// lint-as: src-main/plane/bad.lint-fixture.ts
// expect: only src-main/electron imports 'electron'
import { app } from 'electron';
export const x = app;
