/**
 * A Node module hook for tests that check what a process loads (`NODE_OPTIONS=--import
 * <this file>` and AGENTPLANE_MODULE_LOG=<file>): every ES module the process loads is appended
 * to that file, one URL a line. CommonJS files a package requires internally are not seen; a
 * package's entry is, which is what the tests ask about.
 */
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// Imported with --import on the main thread, it registers itself; the loader thread that then
// loads it as the hooks module does not register again.
if (isMainThread && process.env.AGENTPLANE_MODULE_LOG) register(import.meta.url, import.meta.url);

/** The hook itself, run on the loader's thread. */
export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (process.env.AGENTPLANE_MODULE_LOG && !url.startsWith('node:')) appendFileSync(process.env.AGENTPLANE_MODULE_LOG, `${url}\n`);
  return result;
}
