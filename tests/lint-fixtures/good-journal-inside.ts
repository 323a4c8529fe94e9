// lint-as: src-main/journal/good.lint-fixture.ts
// expect: nothing
import { journalStoreOf, type Journal } from './journal';
import type { JournalStore } from './journal-store';
import { SqliteJournalStore } from './sqlite-store';
export const storeOf = (journal: Journal): JournalStore => journalStoreOf(journal);
export const x = SqliteJournalStore;
