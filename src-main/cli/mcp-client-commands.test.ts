/**
 * `agentplane mcp servers …` and `agentplane mcp tools <server>` as a person runs them: the CLI
 * as a real process (its TypeScript entry through tsx, so no build is needed), opening the data
 * dir in-process since no plane runs there, against server-everything over stdio.
 */
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { EVERYTHING } from '../../tests/doubles/everything-server';
import { runCliFromSource, type SourceCliRun } from '../../tests/support/cli-from-source';


function cli(args: string[]): Promise<SourceCliRun> {
  return runCliFromSource(args);
}

describe.concurrent('agentplane mcp servers / mcp tools', () => {
  it('adds, lists, shows tools (with the negotiated version), removes; never prints a secret', { timeout: 90_000 }, async () => {
    const d = ['--data-dir', tempDataDir('ap-mcp-cli-')];
    const added = await cli(['mcp', 'servers', 'add', 'everything', '--command', process.execPath, '--arg', EVERYTHING, '--arg', 'stdio', '--env', 'API_TOKEN=sekrit-4471', '--json', ...d]);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ ok: true, result: { name: 'everything', transport: 'stdio', state: 'disconnected', envNames: ['API_TOKEN'] } });
    expect(added.stdout).not.toContain('sekrit-4471');

    const listed = await cli(['mcp', 'servers', 'list', ...d]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^everything {2}stdio {2}disconnected {2}.*server-everything.* stdio \(env: API_TOKEN\)$/m);
    expect(listed.stdout).not.toContain('sekrit-4471');

    const tools = await cli(['mcp', 'tools', 'everything', ...d]);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/^everything {2}stdio {2}connected {2}MCP 2025-11-25 {2}.*everything/m);
    expect(tools.stdout).toMatch(/^ {2}tool echo: /m);
    expect(tools.stdout).toMatch(/^ {2}prompt /m);
    expect(tools.stdout).toMatch(/^ {2}resource /m);
    expect(tools.stdout).not.toContain('sekrit-4471');

    expect((await cli(['mcp', 'servers', 'remove', 'everything', ...d])).stdout).toContain('removed everything');
    const again = await cli(['mcp', 'servers', 'remove', 'everything', '--json', ...d]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, error: { code: 'AP_NOT_FOUND', message: 'no MCP server named everything is declared' } });
  });

  it('an unreachable server fails `mcp tools` with its error; a duplicate name and usage mistakes are refused', { timeout: 90_000 }, async () => {
    const d = ['--data-dir', tempDataDir('ap-mcp-cli-')];
    const usage = Promise.all([
      cli(['mcp', 'servers', 'add', 'odd', '--command', 'x', '--url', 'http://127.0.0.1:1/mcp', ...d]),
      cli(['mcp', 'servers', 'add', 'odd', '--command', 'x', '--env', 'NOVALUE', '--json', ...d]),
    ]);
    const web = await cli(['mcp', 'servers', 'add', 'web', '--url', 'http://127.0.0.1:9/mcp', '--header', 'Authorization: Bearer hdr-secret-99', ...d]);
    expect(web.code).toBe(0);
    expect(web.stdout).toContain('web  http  disconnected  http://127.0.0.1:9/mcp (headers: Authorization)');
    expect(web.stdout).not.toContain('hdr-secret-99');

    const unreachable = await cli(['mcp', 'tools', 'web', ...d]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toContain('web  http  failed');
    expect(unreachable.stderr).toMatch(/agentplane: cannot connect to web: /);
    expect(unreachable.stdout + unreachable.stderr).not.toContain('hdr-secret-99');

    const duplicate = await cli(['mcp', 'servers', 'add', 'web', '--url', 'http://127.0.0.1:9/mcp', '--json', ...d]);
    expect(duplicate.code).toBe(1);
    expect(JSON.parse(duplicate.stdout)).toMatchObject({ ok: false, error: { code: 'AP_CONFLICT', message: expect.stringContaining('already declared') } });

    const [both, badEnv] = await usage;
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('give exactly one of --command <cmd> (a stdio server) or --url <url>');
    expect(badEnv.code).toBe(1);
    expect(JSON.parse(badEnv.stdout)).toEqual({ ok: false, error: { code: 'AP_BAD_REQUEST', message: '--env NOVALUE: expected NAME=VALUE' } });
  });
});
