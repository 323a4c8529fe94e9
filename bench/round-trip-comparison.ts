/**
 * The comparison both HTTP benchmarks make: a subject and a bare baseline called by the same
 * client, interleaved, first call by call (latency) and then in alternating rounds at a fixed
 * concurrency (throughput), reported as the same four measurements and the notes a reader
 * needs to trust or repeat them.
 */
import { createRequire } from 'node:module';
import type { Measurement } from './bench-types';
import { interleavedLatencies, interleavedThroughput, summarise, type Operation } from './measure';

const UNDICI_VERSION = (createRequire(import.meta.url)('undici/package.json') as { version: string }).version;

export interface RoundTripSettings {
  warmUp: number;
  sequential: number;
  concurrency: number;
  requestsPerRound: number;
  rounds: number;
}

export async function compareRoundTrips(subject: Operation, baseline: Operation, s: RoundTripSettings): Promise<{ measurements: Measurement[]; notes: string[] }> {
  const operations = [subject, baseline];
  await interleavedLatencies(operations, s.warmUp);
  const [subjectUs, baselineUs] = (await interleavedLatencies(operations, s.sequential)).map(summarise);
  const [subjectRps, baselineRps] = await interleavedThroughput(operations, { concurrency: s.concurrency, requestsPerRound: s.requestsPerRound, rounds: s.rounds });
  return {
    measurements: [
      { metric: 'p50 latency', unit: 'µs', subject: subjectUs!.p50, baseline: baselineUs!.p50, better: 'lower', judged: true },
      { metric: 'p99 latency', unit: 'µs', subject: subjectUs!.p99, baseline: baselineUs!.p99, better: 'lower', judged: false },
      { metric: 'mean latency', unit: 'µs', subject: subjectUs!.mean, baseline: baselineUs!.mean, better: 'lower', judged: false },
      { metric: `throughput (c=${s.concurrency})`, unit: 'req/s', subject: subjectRps!, baseline: baselineRps!, better: 'higher', judged: true },
    ],
    notes: [
      `client: undici ${UNDICI_VERSION} Pool per server, keep-alive, ${s.concurrency} connections, same headers and body`,
      `warm-up ${s.warmUp} calls each, then ${s.sequential} sequential calls each, interleaved call by call`,
      `throughput: ${s.rounds} alternating rounds of ${s.requestsPerRound} calls each at concurrency ${s.concurrency}`,
    ],
  };
}
