// `npm run screenshots`: refreshes the committed screenshots the README shows (e2e/screenshots)
// by running the UI e2e with their screenshot folder pointed there. `npm test` writes its
// screenshots under test-results/ instead, so a test run leaves `git status` clean.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const bin = (name) => join('node_modules', '.bin', name);
const env = { ...process.env, AGENTPLANE_SCREENSHOTS_DIR: join('e2e', 'screenshots') };
for (const [command, args] of [
  [bin('electron-vite'), ['build']],
  [bin('vitest'), ['run', '--project', 'e2e', 'e2e/shell.e2e.ts', 'e2e/control-ui.e2e.ts', 'e2e/acp-sessions.e2e.ts', 'e2e/mcp-ui.e2e.ts']],
]) {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
