#!/usr/bin/env node
// The Electron security scan (`npm run security`): @doyensec/electronegativity over the code
// that configures and runs the desktop window, a summary by severity, and exit 1 on any HIGH
// finding (each printed with its check name, file and line).
//
//   node scripts/electron-security.mjs [--offline] [--out report.csv]
//
// What is scanned: a temp copy of src-main, src-preload, src-shared and src-renderer, without
// tests. The tool's global checks (CSP, navigation limits, permission handler) look across
// everything they are given, so the main-process code, the preload and the page's index.html
// (which carries the CSP) must be scanned together; pointing it at the repository instead
// would walk node_modules and lint the deliberately insecure fixtures in tests/lint-fixtures.
//
// How it is run: through the package's programmatic entry (its `main`, the same runner the CLI
// calls), not `node_modules/.bin/electronegativity`. The bin does `require('commander')`
// without declaring it, so it gets this project's commander 14, whose API it predates; it
// dies with "_commander2.default.version is not a function". The runner also returns the
// findings as objects, so nothing is lost by not parsing its CSV; the CSV report is written
// from those objects in the tool's own column layout (its own writer issues the header and
// the rows as two unordered async writes, which can drop rows).
//
// Offline, the tool prints "Could not retrieve updated translations" and "Something went wrong
// while fetching Electron's releases"; both are harmless. `--offline` skips the one check that
// needs the network (AVAILABLE_SECURITY_FIXES_GLOBAL_CHECK, which compares our Electron version
// with the release list), saving its connection retries.
//
// Exit codes: 0 no HIGH finding; 1 at least one HIGH finding; 2 the scan itself failed or
// could not parse a file (an unscanned file is a hole, not a pass).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

const SCANNED = ['src-main', 'src-preload', 'src-shared', 'src-renderer'];
const SEVERITIES = ['HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL'];
const NETWORK_CHECK = 'availablesecurityfixesglobalcheck';

const { values: flags } = parseArgs({
  options: { offline: { type: 'boolean', default: false }, out: { type: 'string' } },
});

/** The Electron version the app ships with: the installed package, else the pinned spec. */
function electronVersion() {
  const installed = join(root, 'node_modules', 'electron', 'package.json');
  if (existsSync(installed)) return JSON.parse(readFileSync(installed, 'utf8')).version;
  const spec = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies?.electron;
  if (!spec) throw new Error('package.json names no electron version');
  return spec.replace(/^[^\d]*/, '');
}

function copyScannedSources(target) {
  for (const folder of SCANNED) {
    cpSync(join(root, folder), join(target, folder), {
      recursive: true,
      // Tests may hold insecure snippets on purpose; they never run in the app.
      filter: (source) => !/\.test\.tsx?$/.test(source),
    });
  }
}

const csvField = (value) => (value == null ? 'N/A' : `"${String(value).replace(/"/g, '""')}"`);

function writeCsv(file, issues) {
  const header = 'issue, severity, confidence, filename, location, sample, description, url';
  const rows = issues.map((issue) =>
    [
      issue.id,
      csvField(issue.severity.name),
      csvField(issue.confidence.name),
      csvField(issue.file),
      csvField(`${issue.location.line}:${issue.location.column}`),
      csvField(issue.sample),
      csvField(issue.description),
      `https://github.com/doyensec/electronegativity/wiki/${issue.id}`,
    ].join(','),
  );
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${[header, ...rows].join('\n')}\n`);
}

function printTable(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd();
  console.log(line(headers));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'agentplane-electronegativity-'));
  const input = join(work, 'input');
  const report = resolve(flags.out ?? join(work, 'report.csv'));
  const version = electronVersion();
  const started = performance.now();
  let result;
  try {
    copyScannedSources(input);
    const run = require('@doyensec/electronegativity');
    result = await run(
      {
        input,
        isSarif: false,
        customScan: [],
        excludeFromScan: flags.offline ? [NETWORK_CHECK] : [],
        isRelative: true,
        isVerbose: true,
        electronVersionOverride: version,
        parserPlugins: [],
      },
      false,
    );
  } finally {
    // Only the report is kept: the whole work folder goes when the report is written elsewhere.
    rmSync(flags.out ? work : input, { recursive: true, force: true });
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const issues = [...result.issues].sort(
    (a, b) => b.severity.value - a.severity.value || a.id.localeCompare(b.id) || String(a.file).localeCompare(String(b.file)),
  );
  writeCsv(report, issues);

  console.log('');
  console.log(
    `electronegativity: ${result.globalChecks + result.atomicChecks} checks (${result.globalChecks} global) ` +
      `over ${SCANNED.join(', ')} for Electron ${version}${flags.offline ? ', offline' : ''} in ${seconds} s`,
  );
  console.log('');
  printTable(
    ['severity', 'findings', 'for review'],
    SEVERITIES.map((s) => {
      const of = issues.filter((i) => i.severity.name === s);
      return [s, of.length, of.filter((i) => i.manualReview).length];
    }),
  );
  if (issues.length > 0) {
    console.log('');
    printTable(
      ['severity', 'confidence', 'check', 'where', 'review'],
      issues.map((i) => [i.severity.name, i.confidence.name, i.id, `${i.file}:${i.location.line}:${i.location.column}`, i.manualReview ? 'yes' : '']),
    );
  }
  console.log('');
  console.log(`CSV report: ${report}`);

  const broken = result.errors.filter((e) => !e.tolerable);
  for (const error of result.errors) {
    console.log(`${error.tolerable ? 'parser warning' : 'could not scan'}: ${error.file}: ${error.message}`);
  }

  const high = issues.filter((i) => i.severity.name === 'HIGH');
  if (high.length > 0) {
    console.log('');
    console.log(`${high.length} HIGH finding(s):`);
    for (const issue of high) {
      console.log(`  ${issue.id} at ${issue.file}:${issue.location.line}:${issue.location.column} (${issue.confidence.name})`);
      console.log(`    ${issue.description}`);
      if (issue.sample) console.log(`    > ${issue.sample}`);
      console.log(`    https://github.com/doyensec/electronegativity/wiki/${issue.id}`);
    }
  }
  if (broken.length > 0) {
    console.log(`\n${broken.length} file(s) could not be scanned; the result is incomplete.`);
    return 2;
  }
  return high.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`electron-security: the scan failed: ${error?.stack ?? error}`);
    process.exit(2);
  },
);
