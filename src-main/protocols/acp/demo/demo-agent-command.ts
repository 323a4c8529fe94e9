/**
 * How to start the demo agent from wherever this code runs, as argv for a spawn (or for
 * `agentplane acp tap -- <argv>`). Built (out/main: the CLI) the agent is its own bundle,
 * out/main/acp-demo-agent.js (an input of electron.vite.config.ts), found from the package root
 * as other built files are (app-paths.ts). From source (vitest, tsx) this module is a .ts file
 * and the agent is demo-agent.ts beside it, run through tsx's loader; the loader is named by
 * its file URL, so the agent starts from any cwd, not only the repository root.
 *
 * `process.execPath` is Node for the CLI and tests. Inside Electron it is the Electron binary,
 * which would need ELECTRON_RUN_AS_NODE; the demo is started from the CLI, so that case is not
 * served here.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { appRoot } from '../../../base/app-paths';

export function demoAgentCommand(extraArgs: readonly string[] = []): string[] {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    return [process.execPath, '--import', tsxLoader, join(dirname(here), 'demo-agent.ts'), ...extraArgs];
  }
  return [process.execPath, join(appRoot(), 'out', 'main', 'acp-demo-agent.js'), ...extraArgs];
}
