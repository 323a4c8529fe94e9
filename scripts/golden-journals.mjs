// Makes golden journals with this build's code (tests/fixtures/journals/README.md says what they
// are and when to make new ones). Run with tsx, which loads the TypeScript it imports:
//
//   node --import tsx scripts/golden-journals.mjs [--out DIR] [--only KIND[,KIND…]] [--tag TAG]
//
// TAG (default: today's date) names the generation; an existing golden journal is never replaced.
import { parseArgs } from 'node:util';
import { generateGoldenJournals } from '../tests/support/golden-journals-generator.ts';

const { values } = parseArgs({ options: { out: { type: 'string' }, only: { type: 'string' }, tag: { type: 'string' } } });
const written = await generateGoldenJournals({
  ...(values.out ? { out: values.out } : {}),
  ...(values.only ? { only: values.only.split(',') } : {}),
  tag: values.tag ?? new Date().toISOString().slice(0, 10),
});
for (const file of written) console.log(file);
// Pools the planes opened (SQLite workers, sockets) may hold the loop; everything is written.
process.exit(0);
