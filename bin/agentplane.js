#!/usr/bin/env node
// The `agentplane` command: runs the built CLI. `npm install` builds it (the prepare script);
// after editing sources, `npm run build` brings it up to date.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = fileURLToPath(new URL('../out/main/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write('agentplane: the CLI is not built yet; run `npm run build` in the agentplane folder.\n');
  process.exit(1);
}
await import(pathToFileURL(cli).href);
