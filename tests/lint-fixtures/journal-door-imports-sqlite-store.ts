// lint-as: src-main/peers/bad.lint-fixture.ts
// expect: the SQLite store is not imported
import { SqliteJournalStore } from '../journal/sqlite-store';
export const x = SqliteJournalStore;
