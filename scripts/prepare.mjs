// Runs after a local `npm install`: builds the app so that `npx agentplane …` works at once.
// A failed build must not fail the install (a half-edited tree should still install); the
// failure is printed and `npm start` / `npm test` build again and fail loudly there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('node_modules/electron-vite')) process.exit(0); // production install: nothing to build with
const r = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build'], { stdio: 'inherit' });
if (r.status !== 0) console.warn('agentplane: build after install failed; `npm run build` shows why.');
