// lint-as: src-main/plane/bad.lint-fixture.ts
// expect: production code never imports tests/
import { tempDataDir } from '../../tests/support/journal-support';
export const x = tempDataDir;
