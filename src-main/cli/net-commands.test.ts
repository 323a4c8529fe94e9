/**
 * `agentplane net allow|list|remove` as a person runs them: the CLI as a real process (its
 * TypeScript entry through tsx, no build needed), opening the data dir in-process since no
 * plane runs there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { runCliFromSource, type SourceCliRun } from '../../tests/support/cli-from-source';


function cli(args: string[], env: Record<string, string> = {}): Promise<SourceCliRun> {
  return runCliFromSource(args, env);
}

describe('agentplane net', () => {
  it('allows, lists (with the derived provider entry), removes; a bad origin is refused naming what is wrong', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-net-cli-');
    const d = ['--data-dir', dataDir];
    const allowed = await cli(['net', 'allow', 'http://127.0.0.1:8080/', ...d]);
    expect(allowed.stdout.trim()).toBe('allowed http://127.0.0.1:8080');
    expect(allowed.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dataDir, 'net-allow.json'), 'utf8'))).toEqual({ origins: ['http://127.0.0.1:8080'] });

    const listed = await cli(['net', 'list', ...d], { AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^http:\/\/127\.0\.0\.1:8080$/m);
    expect(listed.stdout).toMatch(/^http:\/\/127\.0\.0\.1:11434 {2}\(provider chat: its configured base URL\)$/m);

    const bad = await cli(['net', 'allow', 'http://127.0.0.1:8080/v1', '--json', ...d]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST', message: expect.stringMatching(/has a path, query or fragment/) } });

    const removed = await cli(['net', 'remove', 'http://127.0.0.1:8080', ...d]);
    expect(removed.stdout.trim()).toBe('removed http://127.0.0.1:8080');
  });
});
