/**
 * What netguard costs per connection. Subject: one small GET through netguard's dispatcher
 * (net/netguard.ts) to an allowed loopback origin, the connection opened for that request and
 * closed after it (`reset: true`), so every call pays the connect hook: the origin computed
 * from the connect options, the allow list asked, then undici's own connector. Baseline: the
 * same GET through a plain undici Agent, also a new connection each time. Both in this process,
 * against the same node:http server on 127.0.0.1, interleaved call by call with the order
 * rotating (measure.ts), after a warm-up.
 *
 * An allowed origin is the path the plane's connections to a local model server or a declared
 * MCP server take; a name judged through DNS would add the resolver's time, which the baseline
 * pays inside its own connector too, and which loopback cannot show honestly (a name that
 * resolves to loopback is refused, as it must be).
 *
 * Goal (docs/PERFORMANCE.md): netguard's cost per connection ≤ 1.2× a plain undici connect.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { createNetguard, staticAllowList } from '../src-main/net/netguard';
import type { Benchmark, BenchResult } from './bench-types';
import { interleavedLatencies, summarise } from './measure';

const settings = { warmUp: 50, calls: 600 };

async function run(): Promise<BenchResult> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const guard = createNetguard({ allow: staticAllowList([origin]) });
  const plain = new Agent();
  const get = (dispatcher: Dispatcher) => async () => {
    const answer = await request(`${origin}/`, { dispatcher, reset: true });
    if ((await answer.body.text()) !== 'ok') throw new Error('unexpected answer');
  };
  try {
    const operations = [get(guard.dispatcher), get(plain)];
    await interleavedLatencies(operations, settings.warmUp);
    const [subject, baseline] = (await interleavedLatencies(operations, settings.calls)).map(summarise);
    return {
      subject: 'connect + GET through netguard (allowed loopback origin), a new connection each call',
      baseline: 'connect + GET through a plain undici Agent, a new connection each call',
      measurements: [
        { metric: 'p50 latency', unit: 'µs', subject: subject!.p50, baseline: baseline!.p50, better: 'lower', judged: true },
        { metric: 'mean latency', unit: 'µs', subject: subject!.mean, baseline: baseline!.mean, better: 'lower', judged: false },
        { metric: 'p99 latency', unit: 'µs', subject: subject!.p99, baseline: baseline!.p99, better: 'lower', judged: false },
      ],
      notes: [`${settings.calls} calls each after ${settings.warmUp} warm-up, interleaved; the server answers 2 bytes; reset: true closes each connection`],
    };
  } finally {
    await Promise.all([guard.close(), plain.close()]);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const benchmark: Benchmark = {
  name: 'netguard',
  goal: { maxRatio: 1.2, text: "netguard's cost per connection ≤ 1.2× a plain undici connect (p50 latency)" },
  run,
};

export default benchmark;
