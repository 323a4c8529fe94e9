// lint-as: tests/support/bad.lint-fixture.ts
// expect: only journal-store.ts's plain row types are imported
import type { JournalStore } from '../../src-main/journal/journal-store';
export type X = JournalStore;
