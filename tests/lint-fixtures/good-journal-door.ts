// lint-as: src-main/plane/good.lint-fixture.ts
// expect: nothing
import type { Journal } from '../journal/journal';
import type { StoredRecord } from '../journal/journal-store';
import { journalPath, sha256Hex } from '../journal/sqlite-store';
export const read = async (journal: Journal): Promise<StoredRecord[]> => journal.readRun(sha256Hex(journalPath('/tmp')), 1, (await journal.runLastSeq('run-1')) ?? 0);
