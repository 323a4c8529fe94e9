/**
 * Where the e2e tests write their screenshots. A test run must leave `git status` clean, so by
 * default they go under test-results/ (ignored by git); `npm run screenshots` points this at
 * e2e/screenshots, the committed pictures the README shows, to refresh them on purpose.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { REPO_ROOT } from './serve-process';

const chosen = process.env.AGENTPLANE_SCREENSHOTS_DIR;

export const SCREENSHOTS_DIR = chosen ? (isAbsolute(chosen) ? chosen : resolve(REPO_ROOT, chosen)) : join(REPO_ROOT, 'test-results', 'screenshots');
