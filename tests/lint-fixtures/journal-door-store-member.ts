// lint-as: src-main/runtime/bad.lint-fixture.ts
// expect: never its store: the journal's door
import type { Journal } from '../journal/journal';
export const children = (options: { journal: Journal }) => options.journal.store.childRuns('run-1', 10);
