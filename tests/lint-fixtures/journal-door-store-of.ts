// lint-as: src-main/runtime/bad.lint-fixture.ts
// expect: not reached through journalStoreOf
import { journalStoreOf, type Journal } from '../journal/journal';
export const head = (journal: Journal) => journalStoreOf(journal).head();
