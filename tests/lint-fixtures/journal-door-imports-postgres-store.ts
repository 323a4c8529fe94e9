// lint-as: src-main/plane/bad.lint-fixture.ts
// expect: the PostgreSQL store is not imported
import { PostgresJournalStore } from '../journal/postgres-store';
export const x = PostgresJournalStore;
