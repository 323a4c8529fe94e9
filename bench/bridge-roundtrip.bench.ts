/**
 * What the web bridge costs per command. Subject: `plane.status` through a real
 * `startWebBridge` on 127.0.0.1 over a real plane from `createPlane`, so every request pays
 * what a real one pays: the Host and Origin checks, the constant-time token comparison, the
 * contract's zod parse, the dispatcher and the security headers. Baseline: a bare fastify
 * route on 127.0.0.1 that answers the same JSON object. Both are called by the same client
 * (an undici Pool with keep-alive, the same headers and body), in the same process and run.
 *
 * The ratio is the bridge's own overhead over "HTTP + JSON on loopback", which no bridge can
 * avoid; the goal is that it stays within 1.5× of that floor. Client and servers share one
 * thread, so the client's own work is in both numbers: the ratio is the round trip a caller
 * sees, and the server-side overhead alone is somewhat larger than it.
 *
 * The throughput pass alternates ten short rounds rather than three long ones: with fewer,
 * longer rounds the ratio swung between 1.3× and 1.8× from run to run on a 2-core machine;
 * with ten it stays within a few hundredths.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { startWebBridge } from '../src-main/bridge/web-bridge';
import { appVersion } from '../src-main/base/app-paths';
import { createPlane } from '../src-main/plane/plane';
import type { Benchmark, BenchResult } from './bench-types';
import type { Operation } from './measure';
import { compareRoundTrips } from './round-trip-comparison';

const WARM_UP = 500;
const SEQUENTIAL = 2000;
const CONCURRENCY = 16;
const REQUESTS_PER_ROUND = 1000;
const ROUNDS = 10;

const PATH = '/api/commands/plane.status';

interface Target {
  pool: Pool;
  call: Operation;
}

/** One client per server, configured identically; the answer is read and parsed as the UI does. */
function target(origin: string, token: string): Target {
  const pool = new Pool(origin, { connections: CONCURRENCY, pipelining: 1 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const call = async () => {
    const response = await pool.request({ path: PATH, method: 'POST', headers, body: '{}' });
    const body = (await response.body.json()) as { ok?: boolean };
    if (response.statusCode !== 200 || body.ok !== true) throw new Error(`${origin}${PATH} answered ${response.statusCode}`);
  };
  return { pool, call };
}

async function run(): Promise<BenchResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-'));
  const plane = await createPlane({ dataDir, version: appVersion(), host: 'headless' });
  const bridge = await startWebBridge({ plane, port: 0, rendererDir: null });
  const bare = Fastify({ logger: false });
  const pools: Pool[] = [];
  try {
    const subject = target(`http://127.0.0.1:${bridge.port}`, bridge.token);
    pools.push(subject.pool);

    // The baseline answers exactly what the bridge answers (captured once), as an object that
    // fastify serialises per request just as it does the bridge's.
    const answer = await subject.pool.request({
      path: PATH,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bridge.token}` },
      body: '{}',
    });
    const payload = (await answer.body.json()) as unknown;
    bare.post(PATH, async () => payload);
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const address = bare.server.address();
    if (address === null || typeof address === 'string') throw new Error('the baseline server has no TCP address');
    const baseline = target(`http://127.0.0.1:${address.port}`, bridge.token);
    pools.push(baseline.pool);

    // The measured path really is guarded: without the token the same request is refused.
    const refused = await subject.pool.request({ path: PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await refused.body.dump();
    if (refused.statusCode !== 401) throw new Error(`the bridge answered ${refused.statusCode} without a token; expected 401`);

    const comparison = await compareRoundTrips(subject.call, baseline.call, { warmUp: WARM_UP, sequential: SEQUENTIAL, concurrency: CONCURRENCY, requestsPerRound: REQUESTS_PER_ROUND, rounds: ROUNDS });

    return {
      subject: 'plane.status through startWebBridge (Host/Origin check, token, zod, dispatch)',
      baseline: 'bare fastify POST route answering the same JSON',
      measurements: comparison.measurements,
      notes: [
        ...comparison.notes,
        `node ${process.version}, ${process.platform}/${process.arch}`,
      ],
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    await bare.close();
    await bridge.close();
    await plane.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'bridge-roundtrip',
  goal: { maxRatio: 1.5, text: 'a command through the web bridge costs ≤ 1.5× a bare fastify route (p50 and throughput)' },
  run,
};

export default benchmark;
