import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyDispatcher, undici } from './undici';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function answering(text: string): Promise<string> {
  const server = createServer((_request, response) => response.end(text));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('undici, loaded on first use', () => {
  it('a lazy dispatcher is made by its first request, once, and is a real dispatcher from then on', async () => {
    let made = 0;
    const { dispatcher, close } = lazyDispatcher(({ Agent }) => {
      made += 1;
      return new Agent();
    });
    const url = await answering('hello');
    expect(made).toBe(0);
    const first = await undici().request(url, { dispatcher });
    expect(await first.body.text()).toBe('hello');
    const second = await undici().fetch(url, { dispatcher });
    expect(await second.text()).toBe('hello');
    expect(made).toBe(1);
    expect(dispatcher).toBeInstanceOf(undici().Dispatcher);
    await close();
    // Closed for good: the real dispatcher refuses what follows.
    await expect(undici().request(url, { dispatcher })).rejects.toThrow(/closed|destroyed/i);
  });

  it('closing a lazy dispatcher nobody used makes nothing', async () => {
    let made = 0;
    const { close } = lazyDispatcher(({ Agent }) => {
      made += 1;
      return new Agent();
    });
    await close();
    expect(made).toBe(0);
  });

  it('the modules that reach outside load no undici until they make a request', () => {
    // A process of its own: this one has undici loaded already. Every module that used to
    // import it, and a netguard made as the plane makes one at start-up.
    const script = `
      const { createRequire } = await import('node:module');
      await import('./src-main/providers/wire.ts');
      await import('./src-main/peers/peer-client.ts');
      await import('./src-main/peers/peer-supervisor.ts');
      await import('./src-main/protocols/a2a/client/a2a-client.ts');
      await import('./src-main/protocols/mcp/client/mcp-client-pool.ts');
      const { createNetguard } = await import('./src-main/net/netguard.ts');
      const guard = createNetguard({ allow: { allows: () => false } });
      await guard.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('/node_modules/undici/'));
      process.stdout.write(JSON.stringify(loaded.length));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    expect(JSON.parse(out)).toBe(0);
  });

  it("loading undici does not eat into a request's deadline", () => {
    // undici's first load made slow (600 ms) by a hook in a process of its own; the request
    // is given 400 ms, which the server itself needs only a moment of.
    const slowLoad = `import Module from 'node:module'; const load = Module._load; Module._load = function (name, ...rest) { if (name === 'undici') { const until = Date.now() + 600; while (Date.now() < until); } return load.call(this, name, ...rest); };`;
    const script = `
      const { createServer } = await import('node:http');
      const { createNetguard, guardedRequest } = await import('./src-main/net/netguard.ts');
      const server = createServer((_request, response) => response.end('on time'));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const origin = 'http://127.0.0.1:' + server.address().port;
      const guard = createNetguard({ allow: { allows: (o) => o === origin } });
      let outcome;
      try {
        const answer = await guardedRequest(guard, origin + '/', { deadlineMs: 400 });
        outcome = answer.body.toString();
      } catch (error) {
        outcome = String(error.message);
      }
      await guard.close();
      server.close();
      process.stdout.write(JSON.stringify(outcome));
    `;
    const out = execFileSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(slowLoad)}`, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    expect(JSON.parse(out)).toBe('on time');
  });
});
