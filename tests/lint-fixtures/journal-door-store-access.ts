// lint-as: src-main/plane/bad.lint-fixture.ts
// expect: never its store: the journal's door
import type { Journal } from '../journal/journal';
export const lastSeq = (journal: Journal) => journal.store.runLastSeq('run-1');
