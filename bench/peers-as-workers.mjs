/**
 * Fifty peers as worker threads of one host process: the design that would meet the memory goal
 * one process per peer cannot (docs/PERFORMANCE.md, "Fifty peers"). Not how the plane runs its
 * peers; measured by bench/fifty-peers.bench.ts, which runs this file as a process of its own so
 * that its resident set is this host's alone.
 *
 * The host loads the built peer (`agentplane peer start`'s own code, out/main/chunks/peer-run-*.js)
 * once, then starts each peer in a worker thread (runPeer, each with a data dir of its own, port
 * 0) with the young generation the supervisor gives peer processes, waits for each to say it is
 * up, lets them settle, and prints one JSON line: the host's RSS and private memory before and
 * after, per peer. Usage: node bench/peers-as-workers.mjs <peers> <settle ms> <dir for data dirs>
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

const [peers, settleMs, root] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
if (!(peers > 0) || !(settleMs >= 0) || !root) throw new Error('usage: node bench/peers-as-workers.mjs <peers> <settle ms> <dir for data dirs>');

const chunks = resolve(import.meta.dirname, '..', 'out', 'main', 'chunks');
// The peer-run chunk `peer start` imports (the build may leave older ones beside it).
const commands = readdirSync(chunks).filter((name) => name.startsWith('peer-commands-')).map((name) => readFileSync(join(chunks, name), 'utf8')).join('\n');
const name = /peer-run-[\w-]+\.js/.exec(commands)?.[0];
if (!name) throw new Error(`no peer-run chunk named by ${chunks}/peer-commands-*.js: run the build first`);
const chunk = join(chunks, name);

const status = () => readFileSync('/proc/self/status', 'utf8');
const mb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status())[1]) / 1024;

await import(chunk);
const before = { rssMb: mb('VmRSS'), anonMb: mb('RssAnon') };
const code = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.chunk)
  .then((peer) => peer.runPeer({ name: workerData.name, port: 0, portFallback: true, dataDir: workerData.dataDir, demoSession: false }, (line) => {
    if (String(line).includes(' is up')) parentPort.postMessage({ up: true });
  }))
  .catch((error) => parentPort.postMessage({ error: String(error?.message ?? error) }));
`;
const started = performance.now();
for (let i = 0; i < peers; i++) {
  const worker = new Worker(code, { eval: true, workerData: { chunk, name: `w${i + 1}`, dataDir: mkdtempSync(join(root, 'worker-peer-')) }, resourceLimits: { maxYoungGenerationSizeMb: 2 } });
  const answer = await new Promise((resolveAnswer, reject) => {
    worker.once('message', resolveAnswer);
    worker.once('error', reject);
  });
  if (!answer.up) throw new Error(`worker peer ${i + 1} did not start: ${answer.error}`);
}
const upMs = performance.now() - started;
await new Promise((resolveSettle) => setTimeout(resolveSettle, settleMs));
const after = { rssMb: mb('VmRSS'), anonMb: mb('RssAnon') };
process.stdout.write(`${JSON.stringify({ peers, upMs, before, after, perPeerRssMb: (after.rssMb - before.rssMb) / peers, perPeerAnonMb: (after.anonMb - before.anonMb) / peers })}\n`);
process.exit(0);
