/**
 * The entry of the process that hosts the plane (built to out/main/plane-host.js): an Electron
 * `utilityProcess` in the desktop app, a Node child process elsewhere and in tests. It builds
 * the plane with the same composition root the CLI uses, starts the local API (the web bridge)
 * so the CLI and a browser reach the same plane, and writes plane.json, all in this process.
 * It imports nothing from 'electron': it runs the same under plain Node.
 */
import { join } from 'node:path';
import { rendererDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { startWebBridge } from '../bridge/web-bridge';
import { createPlane } from '../plane/plane';
import { removePlaneFile, writePlaneFile } from '../plane/plane-file';
import { hostPlane } from '../plane/plane-host';
import { channelToParent } from '../plane/process-channel';

const channel = channelToParent();
if (!channel) {
  process.stderr.write('agentplane: the plane host is started by the desktop app (or a test) with a message channel, not by hand\n');
  process.exit(2);
}

hostPlane(channel, async (config) => {
  const logger = createLogger(join(config.dataDir, 'plane.log'));
  const plane = await createPlane({ dataDir: config.dataDir, version: config.version, host: config.host, logger, demoPeers: config.demoPeers });
  let bridge;
  try {
    bridge = await startWebBridge({ plane, port: 0, rendererDir: rendererDir() });
  } catch (error) {
    await plane.close();
    throw error;
  }
  const local = { pid: process.pid, url: `http://127.0.0.1:${bridge.port}`, port: bridge.port, token: bridge.token, startedAt: plane.status().startedAt };
  writePlaneFile(config.dataDir, local);
  return {
    plane,
    info: { url: local.url, pid: process.pid },
    async close() {
      try {
        await bridge.close();
        await plane.close();
      } finally {
        removePlaneFile(config.dataDir);
      }
    },
  };
});
