/**
 * Shared by the peer tests that drive one in-process peer: a data dir, a registry entry with a
 * known shared secret, the peer started on a free loopback port with the local model, and
 * sessions minted for a same-host caller.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../../src-main/base/logger';
import { createLocalProvider } from '../../src-main/providers/local-provider';
import { settingsFromEnv, startPeer, type StartedPeer } from '../../src-main/plane/peer-host';
import { PeerRegistry } from '../../src-main/peers/peer-registry';
import { mintSession } from '../../src-main/peers/session-token';

export interface TestPeer {
  dataDir: string;
  registry: PeerRegistry;
  peer: StartedPeer;
  /** A fresh session for a caller on 127.0.0.1. */
  session(): string;
  close(): Promise<void>;
}

export async function startTestPeer(id: string, options: { secret: string; ratePerSecond: number; llmMode?: boolean; logger?: Logger }): Promise<TestPeer> {
  const dataDir = mkdtempSync(join(tmpdir(), `agentplane-${id}-`));
  const registry = new PeerRegistry(dataDir);
  const record = registry.create({ id, port: 0, publicIp: '127.0.0.1', secret: options.secret, llmMode: options.llmMode ?? false });
  const peer = await startPeer({
    dataDir,
    record,
    settings: { ...settingsFromEnv({}), ratePerSecond: options.ratePerSecond },
    logger: options.logger ?? silentLogger,
    providers: new Map([['local', createLocalProvider()]]),
  });
  return {
    dataDir,
    registry,
    peer,
    session: () => mintSession({ secret: options.secret, clientIp: '127.0.0.1', ttlSeconds: 3600 }).sessionId,
    async close() {
      await peer.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
