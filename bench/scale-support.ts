/**
 * What the scale probes (bench/scale-*.bench.ts, run by `npm run bench -- --scale`) share: the
 * size of the large journal (BENCH_SCALE_RECORDS, default 10,000,000), the 100,000-record journal
 * each is compared with, both taken from the generator's cache
 * (tests/support/scale-journal-generator.ts) and generated there first when missing, and
 * private copies of them for a probe that writes.
 */
import { closeSync, cpSync, fsyncSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedScaleJournal, DEFAULT_SCALE_RECORDS, type GeneratedJournal, type ScaleProgress } from '../tests/support/scale-journal-generator';

export const SMALL_RECORDS = 100_000;
export const SCALE_RECORDS_ENV = 'BENCH_SCALE_RECORDS';

/** The large journal's size: BENCH_SCALE_RECORDS (e.g. 1000000 or 1_000_000), else 10,000,000. */
export function scaleRecords(value = process.env[SCALE_RECORDS_ENV]): number {
  if (value === undefined || value === '') return DEFAULT_SCALE_RECORDS;
  const records = Number(value.replaceAll('_', ''));
  if (!Number.isSafeInteger(records) || records <= SMALL_RECORDS) {
    throw new Error(`${SCALE_RECORDS_ENV} must be a whole number of records above ${SMALL_RECORDS.toLocaleString('en-US')}, not ${JSON.stringify(value)}`);
  }
  return records;
}

export const count = (n: number) => n.toLocaleString('en-US');

/** A generation's progress, every 5%, on stderr (the bench's own output stays its report). */
function progress(records: number): (p: ScaleProgress) => void {
  let next = 0.05;
  return ({ written, elapsedMs }) => {
    if (written / records < next) return;
    next += 0.05;
    process.stderr.write(`  generating ${count(records)} records: ${count(written)} (${Math.round(written / (elapsedMs / 1000))} rec/s)\n`);
  };
}

/** The cached journal of `records` records, generated first when the cache has none. */
export function scaleJournal(records: number): Promise<GeneratedJournal> {
  return cachedScaleJournal(records, progress(records));
}

/** How the journal was had, for a note: generated now (how long) or from the cache. */
export function originNote(journal: GeneratedJournal): string {
  const size = `${count(journal.records)} records, ${(journal.bytes / 1e9).toFixed(2)} GB on disk`;
  return journal.fromCache
    ? `${size}, from the cache at ${journal.dataDir} (generated earlier in ${journal.generatedSeconds.toFixed(0)} s)`
    : `${size}, generated now in ${journal.generatedSeconds.toFixed(0)} s (${Math.round(journal.records / journal.generatedSeconds)} rec/s) into ${journal.dataDir}`;
}

/** fsync of every file under `dir`, so none of its writes is still waiting to reach the disk. */
function syncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      syncTree(path);
      continue;
    }
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * A private copy of a cached data dir, for a probe that writes; `remove` deletes it. The copy is
 * synced before it is handed out: otherwise gigabytes of its pages are still dirty, and the first
 * SQLite checkpoint into it (which fsyncs the database file) pays for writing them all back,
 * inside a probe's timing and on one side only.
 */
export function copyOfDataDir(dataDir: string, label: string): { dataDir: string; seconds: number; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), `agentplane-scale-${label}-`));
  const copy = join(root, 'data');
  const started = performance.now();
  cpSync(dataDir, copy, { recursive: true });
  syncTree(copy);
  return { dataDir: copy, seconds: (performance.now() - started) / 1000, remove: () => rmSync(root, { recursive: true, force: true }) };
}
