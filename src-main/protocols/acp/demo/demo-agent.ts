/**
 * Entry point of the demo ACP agent as its own process, speaking newline-delimited JSON-RPC on
 * stdin/stdout through the SDK's `ndJsonStream`, as every ACP agent an editor starts does. That
 * is what lets `agentplane acp demo` put the tap between it and the demo client exactly as it
 * would sit between Zed and a real agent. The script itself is demo-agent-app.ts.
 *
 * Runs from source (`node --import tsx demo-agent.ts`, tests) and built (`node
 * out/main/acp-demo-agent.js`, an input of electron.vite.config.ts); demo-agent-command.ts says
 * which. stdout carries protocol only: anything for a person goes to stderr.
 *
 * Flags: `--pause-ms N` pauses between steps so a person can watch the session unfold.
 */
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { appVersion } from '../../../base/app-paths';
import { createDemoAgentApp } from './demo-agent-app';

function pauseFromArgs(argv: readonly string[]): number {
  const at = argv.indexOf('--pause-ms');
  if (at === -1) return 0;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write('agentplane-demo-agent: --pause-ms takes a whole number of milliseconds\n');
    process.exit(2);
  }
  return value;
}

const stream = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>);
const connection = createDemoAgentApp({ version: appVersion(), pauseMs: pauseFromArgs(process.argv.slice(2)) }).connect(stream);
// The client closing stdin ends the connection; exit once what was written has left.
await connection.closed;
process.stdout.write('', () => process.exit(0));
