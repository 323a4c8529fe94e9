/**
 * The runtime and the journal from the command line, against real processes: a run suspended
 * in the running plane is listed, approved and finished from other CLI processes (which act
 * through the plane's local API), halts and refusals, `--json` for scripts, and a journal
 * exported and verified offline, then tampered with and caught.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, requireBuild, runCli, startServe, stopWith, type ServeProcess } from './support/serve-process';

const started: ServeProcess[] = [];
const dirs: string[] = [];
beforeAll(() => requireBuild());
afterEach(() => {
  for (const plane of started.splice(0)) plane.dispose();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(name: string): string {
  const dir = makeTempDir(name);
  dirs.push(dir);
  return dir;
}

async function cliJson(args: string[]): Promise<{ code: number | null; json: Record<string, unknown>; stderr: string }> {
  const run = await runCli([...args, '--json'], { timeoutMs: 30_000 });
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    // Success is `{ok: true, result}`: the tests read the result; a failure stays `{ok: false, error}`.
    if (json.ok === true) json = json.result as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${run.stdout}\n${run.stderr}`);
  }
  return { code: run.code, json, stderr: run.stderr };
}

describe('runs, approvals and halts through a running plane', () => {
  it('a run suspended in the plane is approved from another process and finishes there', async () => {
    const dataDir = tempDir('runtime-cli');
    const plane = await startServe({ dataDir });
    started.push(plane);
    const dd = ['--data-dir', dataDir];

    const agents = await cliJson(['agents', 'list', ...dd]);
    expect((agents.json.agents as Array<{ name: string }>).map((a) => a.name)).toContain('write-note');

    const run = await cliJson(['run', 'write-note', '--input', '{"title":"cli","topic":"terminals"}', '--wait', ...dd]);
    // Left waiting for a person: exit 3 (not done, not failed), the run under {ok: true}.
    expect(run.code).toBe(3);
    expect(run.json).toMatchObject({ status: 'suspended', pending: { reason: 'approval' } });
    const runId = run.json.runId as string;

    const waiting = await cliJson(['approvals', 'list', ...dd]);
    expect((waiting.json.waiting as Array<{ runId: string }>).map((r) => r.runId)).toEqual([runId]);

    const approved = await cliJson(['approvals', 'approve', runId, ...dd]);
    expect(approved.code).toBe(0);
    // The plane process performs the write; poll it through another CLI process.
    let shown = await cliJson(['runs', 'show', runId, ...dd]);
    for (let i = 0; i < 50 && shown.json.status !== 'sealed'; i++) shown = await cliJson(['runs', 'show', runId, ...dd]);
    expect(shown.json).toMatchObject({ outcome: 'succeeded', result: { path: 'notes/cli.md' } });
    expect(readFileSync(join(dataDir, 'workspace', 'notes', 'cli.md'), 'utf8')).toContain('# cli');

    const again = await cliJson(['approvals', 'approve', runId, ...dd]);
    expect(again.code).toBe(1);

    const halted = await cliJson(['halt', '--scope', 'subject:user:local', '--reason', 'drill', ...dd]);
    expect(halted.json).toEqual({ scopes: ['subject:user:local'] });
    const refused = await cliJson(['run', 'summarize', '--input', '{"text":"hi"}', ...dd]);
    expect(refused).toMatchObject({
      code: 1,
      json: { ok: false, error: { code: 'AP_FORBIDDEN', message: `the plane refused to start this run: the halt subject:user:local withholds it; lift it with \`agentplane halt --lift subject:user:local --data-dir ${dataDir}\`` } },
    });
    expect((await cliJson(['halt', '--lift', 'subject:user:local', ...dd])).json).toEqual({ scopes: [] });

    const bad = await cliJson(['run', 'summarize', '--input', '{"nope":1}', ...dd]);
    expect(bad).toMatchObject({ code: 1, json: { ok: false, error: { code: 'AP_BAD_REQUEST' } } });
    const human = await runCli(['run', 'nobody', ...dd]);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('agentplane: no agent named nobody');

    const exit = await stopWith(plane, 'SIGTERM');
    expect(exit.code).toBe(0);
  });
});

describe('journal export and verify', () => {
  it('exports a run and the whole journal, verifies them offline, and catches a tampered copy', async () => {
    const dataDir = tempDir('journal-cli');
    const dd = ['--data-dir', dataDir];
    const run = await cliJson(['run', 'summarize', '--input', '{"text":"Verify me. Twice."}', '--wait', ...dd]);
    expect(run.json).toMatchObject({ outcome: 'succeeded' });
    const out = join(dataDir, 'all.jsonl');
    expect((await runCli(['journal', 'export', '--out', out, ...dd])).code).toBe(0);
    const verified = await runCli(['journal', 'verify', out]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^OK 4 records, root [0-9a-f]{64}$/m);

    const runOut = join(dataDir, 'run.jsonl');
    expect((await runCli(['journal', 'export', '--run', run.json.runId as string, '--out', runOut, ...dd])).code).toBe(0);
    expect((await runCli(['journal', 'verify', runOut])).stdout).toMatch(/^OK 4 records/m);

    const lines = readFileSync(out, 'utf8').split('\n');
    lines[2] = lines[2]!.replace('"effect":"model"', '"effect":"tool"');
    writeFileSync(out, lines.join('\n'));
    const caught = await runCli(['journal', 'verify', out]);
    expect(caught.code).toBe(1);
    expect(caught.stdout).toMatch(/^FAIL seq 2: its content does not match its hash/m);

    const dirReport = await runCli(['journal', 'verify', ...dd]);
    expect(dirReport.code).toBe(0);
    expect(dirReport.stdout).toMatch(/^OK 4 records/m);
  });
});
