/**
 * A loopback HTTP proxy in front of one server (an MCP server over Streamable HTTP, say), for
 * tests that must act while a client's request is in flight: every request is forwarded as it
 * came (streams too) and its answer piped back; a POST's JSON-RPC method is recorded in
 * `methods`, in order of arrival. `hold(method)` keeps every later request of that method from
 * being forwarded until `release()`; `arrived(method)` resolves when the next one arrives (and,
 * if held, is being held). Counting at the proxy tells "the request left the plane" from "it
 * never did" without touching the server behind it.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HoldingProxy {
  /** The target's URL with the proxy's origin: what a client is pointed at. */
  url: string;
  methods: string[];
  hold(method: string): void;
  release(): void;
  arrived(method: string): Promise<void>;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function methodOf(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { method?: unknown };
    return typeof parsed.method === 'string' ? parsed.method : null;
  } catch {
    return null;
  }
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const upstream = new URL(target);
  const methods: string[] = [];
  const held = new Set<string>();
  const waiting: Array<() => void> = [];
  let waiters: Array<{ method: string; wake: () => void }> = [];

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : null;
      const method = body ? methodOf(body) : null;
      if (method) {
        methods.push(method);
        waiters = waiters.filter((w) => (w.method === method ? (w.wake(), false) : true));
        if (held.has(method)) await new Promise<void>((resolve) => waiting.push(resolve));
      }
      const forwarded = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forwarded.on('error', () => res.destroy());
      res.on('close', () => forwarded.destroy());
      if (body) forwarded.end(body);
      else req.pipe(forwarded);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const proxy: HoldingProxy = {
    url: `${origin}${upstream.pathname}${upstream.search}`,
    methods,
    hold(method) {
      held.add(method);
    },
    release() {
      held.clear();
      for (const go of waiting.splice(0)) go();
    },
    arrived(method) {
      return new Promise((wake) => waiters.push({ method, wake }));
    },
    async close() {
      proxy.release();
      waiters = [];
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
