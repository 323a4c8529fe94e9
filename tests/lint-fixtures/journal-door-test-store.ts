// lint-as: tests/bad.lint-fixture.ts
// expect: never its store: the journal's door
import type { Journal } from '../src-main/journal/journal';
export const observed = (peerJournal: Journal) => peerJournal.store.observedRuns(10);
