// Writes a realistic journal of N records (default 10,000,000) through the real Journal, for the
// scale probes (tests/support/scale-journal-generator.ts says what it holds). Run with tsx:
//
//   node --import tsx scripts/scale-journal.mjs [--records N] [--data-dir DIR]
//
// Without --data-dir it fills the cache the scale probes read (`npm run bench -- --scale`), or
// reports the journal already there. It prints progress, the rate and the size on disk.
import { parseArgs } from 'node:util';
import {
  cachedScaleJournal,
  DEFAULT_SCALE_RECORDS,
  dirBytes,
  generateScaleJournal,
} from '../tests/support/scale-journal-generator.ts';

const { values } = parseArgs({ options: { records: { type: 'string' }, 'data-dir': { type: 'string' } } });
const recordsText = values.records ?? String(DEFAULT_SCALE_RECORDS);
const records = Number(recordsText.replaceAll('_', ''));
if (!Number.isSafeInteger(records) || records < 1) {
  console.error(`--records must be a whole number of at least 1 (e.g. 10000000 or 10_000_000), not ${JSON.stringify(recordsText)}`);
  process.exit(2);
}

const STEP = Math.max(1000, Math.min(500_000, Math.round(records / 50 / 1000) * 1000));
let nextReport = STEP;
const onProgress = ({ written, elapsedMs }) => {
  if (written < nextReport && written !== records) return;
  nextReport += STEP;
  const rate = written / (elapsedMs / 1000);
  const left = (records - written) / rate;
  console.log(`${written.toLocaleString('en-US')} / ${records.toLocaleString('en-US')} records, ${Math.round(rate).toLocaleString('en-US')} rec/s, ${(elapsedMs / 1000).toFixed(0)} s so far, ~${left.toFixed(0)} s left`);
};

const mb = (bytes) => `${(bytes / 1e6).toLocaleString('en-US', { maximumFractionDigits: 0 })} MB`;
if (values['data-dir'] === undefined) {
  const journal = await cachedScaleJournal(records, onProgress);
  console.log(
    `${journal.fromCache ? 'already in the cache' : 'generated'}: ${journal.records.toLocaleString('en-US')} records in ${journal.dataDir}, ` +
      `${mb(journal.bytes)} on disk, generated in ${journal.generatedSeconds.toFixed(0)} s (${Math.round(journal.records / journal.generatedSeconds).toLocaleString('en-US')} rec/s)`,
  );
} else {
  const dataDir = values['data-dir'];
  const { seconds } = await generateScaleJournal({ records, dataDir, onProgress });
  console.log(`generated ${records.toLocaleString('en-US')} records in ${dataDir} in ${seconds.toFixed(0)} s (${Math.round(records / seconds).toLocaleString('en-US')} rec/s), ${mb(dirBytes(dataDir))} on disk`);
}
// The journal's worker pool and SQLite handles may hold the loop; everything is written and closed.
process.exit(0);
