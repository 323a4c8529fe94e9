/**
 * How long one CLI call takes (docs/PERFORMANCE.md: start-up, for the process a script starts
 * most). Subject: the built CLI, `node bin/agentplane.js peer list --json` and `runs list --json`
 * against a running `agentplane serve`, from spawn to exit. Baseline: `node` running a small
 * script (written by this bench) that reads the same plane.json and makes the same POST with
 * `node:http`, then prints the body: what any client in Node pays to ask the plane once.
 * `--version` is timed beside `node` printing a version, and shown only.
 *
 * Goal: the start-up goal of item 5 (within 3× a bare Node floor), for a CLI call.
 *
 * Rounds alternate subject and baseline (the order rotates each round); medians are judged.
 * Where the time goes: one extra `peer list` under --cpu-prof, self time by package.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, PACKAGE_VERSION, REPO_ROOT, requireBuild, startServe } from '../e2e/support/serve-process';
import type { Benchmark, BenchResult } from './bench-types';
import { summarise } from './measure';
import { byPackage } from './serve-startup.bench';
import type { CpuProfile } from './cpu-profile';

const ROUNDS = 15;
const WARMUP = 2;
const TIMEOUT_MS = 30_000;

/** Runs `node <args>` to its exit; ms from spawn to exit, failing on a non-zero exit or a wrong answer. */
function timeCall(args: string[], env: NodeJS.ProcessEnv, expect: RegExp): Promise<number> {
  return new Promise((resolveCall, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      if (code !== 0 || !expect.test(stdout)) reject(new Error(`node ${args.join(' ')} exited ${code} with ${JSON.stringify(stdout.slice(0, 200))}; stderr:\n${stderr}`));
      else resolveCall(ms);
    });
  });
}

/** The baseline: the plane's one POST through node:http, the answer printed. */
function writeBaselineScripts(dir: string): { ask: string; version: string } {
  const ask = join(dir, 'ask-the-plane.mjs');
  writeFileSync(
    ask,
    [
      "import { readFileSync } from 'node:fs';",
      "import { request } from 'node:http';",
      "import { join } from 'node:path';",
      "const [command, dataDir] = process.argv.slice(2);",
      "const plane = JSON.parse(readFileSync(join(dataDir, 'plane.json'), 'utf8'));",
      "const req = request(`${plane.url}/api/commands/${command}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${plane.token}` } }, (res) => {",
      "  let text = '';",
      "  res.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => process.stdout.write(`${text}\\n`));",
      '});',
      "req.end('{}');",
    ].join('\n'),
  );
  const version = join(dir, 'print-a-version.mjs');
  writeFileSync(version, `process.stdout.write(${JSON.stringify(`${PACKAGE_VERSION}\n`)});\n`);
  return { ask, version };
}

async function run(): Promise<BenchResult> {
  requireBuild();
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-cli-'));
  const dataDir = join(root, 'data');
  const plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' }, timeoutMs: 60_000 });
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_DEMO_PEERS: '0' };
    delete env.AGENTPLANE_DATA_DIR;
    delete env.NODE_OPTIONS;
    const scripts = writeBaselineScripts(root);
    const operations = {
      peerList: () => timeCall([CLI, 'peer', 'list', '--json', '--data-dir', dataDir], env, /"ok":true/),
      peerListBaseline: () => timeCall([scripts.ask, 'peers.list', dataDir], env, /"ok":true/),
      runsList: () => timeCall([CLI, 'runs', 'list', '--json', '--data-dir', dataDir], env, /"ok":true/),
      runsListBaseline: () => timeCall([scripts.ask, 'runs.list', dataDir], env, /"ok":true/),
      version: () => timeCall([CLI, '--version'], env, new RegExp(PACKAGE_VERSION.replaceAll('.', '\\.'))),
      versionBaseline: () => timeCall([scripts.version], env, new RegExp(PACKAGE_VERSION.replaceAll('.', '\\.'))),
    };
    const names = Object.keys(operations) as Array<keyof typeof operations>;
    const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<keyof typeof operations, number[]>;
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      for (const name of order) {
        const ms = await operations[name]();
        if (round >= WARMUP) samples[name].push(ms);
      }
    }
    const p50 = (name: keyof typeof operations) => summarise(samples[name]).p50;

    const profileDir = join(root, 'cpu-prof');
    await timeCall(['--cpu-prof', '--cpu-prof-dir', profileDir, CLI, 'peer', 'list', '--json', '--data-dir', dataDir], env, /"ok":true/);
    const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the profiled call wrote no .cpuprofile');
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;

    const range = (name: keyof typeof operations) => `${Math.min(...samples[name]).toFixed(0)}–${Math.max(...samples[name]).toFixed(0)} ms`;
    return {
      subject: 'the built CLI against a running serve, spawn to exit: `agentplane peer list --json`, `agentplane runs list --json`',
      baseline: 'node running a script that reads plane.json and makes the same POST with node:http, printing the answer',
      measurements: [
        { metric: 'peer list --json (p50)', unit: 'ms', subject: p50('peerList'), baseline: p50('peerListBaseline'), better: 'lower', judged: true },
        { metric: 'runs list --json (p50)', unit: 'ms', subject: p50('runsList'), baseline: p50('runsListBaseline'), better: 'lower', judged: true },
        { metric: '--version vs node printing one (p50)', unit: 'ms', subject: p50('version'), baseline: p50('versionBaseline'), better: 'lower', judged: false },
      ],
      notes: [
        `${ROUNDS} rounds after ${WARMUP} warm-up, the six calls alternated and their order rotated each round; node ${process.version}`,
        `ranges: peer list ${range('peerList')} (baseline ${range('peerListBaseline')}), runs list ${range('runsList')} (baseline ${range('runsListBaseline')}), --version ${range('version')}`,
        'one extra `peer list --json` under --cpu-prof, spawn to exit: self time by package',
        ...byPackage(profile, 10).map((line) => `    ${line}`),
      ],
    };
  } finally {
    plane.child.kill('SIGTERM');
    await plane.exited;
    plane.dispose();
    rmSync(root, { recursive: true, force: true });
  }
}

const bench: Benchmark = {
  name: 'cli-call',
  goal: { maxRatio: 3, text: 'one CLI call against a running plane within 3× node making the same request (item 5\'s start-up goal, for a CLI call)' },
  run,
};
export default bench;
