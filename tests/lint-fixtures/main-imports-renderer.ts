// lint-as: src-main/bridge/bad.lint-fixture.ts
// expect: main never imports renderer or preload code
import { App } from '../../src-renderer/src/app';
export const x = App;
