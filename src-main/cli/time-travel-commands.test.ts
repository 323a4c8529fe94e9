/**
 * `runs fork`, `runs replay` and `runs diff` as scripts read them (--json) and as a person reads
 * them, over a real data dir holding a two-step agent on the local deterministic model, the
 * commands run in this process (the plane opened on the data dir, as the CLI does when none is
 * serving it); and the bad inputs each refuses, by name.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { addRuntimeCommands } from './runtime-commands';
import { addTimeTravelCommands } from './time-travel-commands';

const AGENT = [
  'name: two-drafts',
  'description: Two drafts on the local model.',
  'input: { type: object, properties: { topic: { type: string } } }',
  'steps:',
  '  - as: first',
  '    model: { provider: local, prompt: "First draft", maxTokens: 20 }',
  '  - as: second',
  '    model: { provider: local, prompt: "Second about {{input.topic}}: {{steps.first.text}}", maxTokens: 20 }',
  '  - output: "{{steps.second.text}}"',
  'grants:',
  '  - { kind: model, name: local }',
  '',
].join('\n');

/** Runs one command in this process; answers the lines it printed and the exit code it set. */
async function cli(args: string[]): Promise<{ lines: string[]; code: number }> {
  const lines: string[] = [];
  const program = new Command().exitOverride();
  program.configureOutput({ writeErr: (s) => lines.push(s.trim()), writeOut: (s) => lines.push(s.trim()) });
  addRuntimeCommands(program, (line) => lines.push(line));
  addTimeTravelCommands(program, (line) => lines.push(line));
  process.exitCode = 0;
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    lines.push((error as Error).message);
    return { lines, code: 1 };
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { lines, code };
}

const json = (lines: string[]) => JSON.parse(lines.at(-1)!) as { ok: boolean; result: Record<string, unknown>; error?: { code: string; message: string } };

describe('runs fork, replay and diff', () => {
  it('a fork at step 1 takes step 0 from its parent; diff and replay say where runs part, for scripts and for people', { timeout: 60_000 }, async () => {
    process.env.AGENTPLANE_DEMO_PEERS = '0';
    const dataDir = tempDataDir('ap-cli-fork-');
    mkdirSync(join(dataDir, 'agents'), { recursive: true });
    writeFileSync(join(dataDir, 'agents', 'two-drafts.yaml'), AGENT);
    const d = ['--data-dir', dataDir];
    const ran = json((await cli(['run', 'two-drafts', '--input', '{"topic":"forks"}', '--wait', '--json', ...d])).lines);
    const parent = String(ran.result.runId);

    const forked = json((await cli(['runs', 'fork', parent, '--at', '1', '--wait', '--json', ...d])).lines);
    expect(forked).toMatchObject({ ok: true, result: { forkOf: { runId: parent, step: 1 }, outcome: 'succeeded' } });
    const fork = String(forked.result.runId);
    const diff = json((await cli(['runs', 'diff', parent, fork, '--json', ...d])).lines);
    expect(diff.result.divergesAt).toBeNull();
    expect((diff.result.steps as Array<{ step: number; fromParent: boolean }>).map((s) => [s.step, s.fromParent])).toEqual([[0, true], [1, false]]);

    const changed = json((await cli(['runs', 'fork', parent, '--at', '1', '--input', '{"topic":"branches"}', '--wait', '--json', ...d])).lines);
    const other = String(changed.result.runId);
    const parted = json((await cli(['runs', 'diff', parent, other, '--json', ...d])).lines);
    expect(parted.result.divergesAt).toMatchObject({ step: 1, reason: 'arguments' });
    const words = (await cli(['runs', 'diff', parent, other, ...d])).lines;
    expect(words).toContain('diverges at step 1 (arguments): step 1 (model local) was asked with different arguments');
    expect(words.some((l) => l.startsWith('     0  model local '))).toBe(true);
    expect(words.some((l) => l.startsWith('≠    1  a: model local '))).toBe(true);
    expect(words.some((l) => l.startsWith('        b: model local '))).toBe(true);

    const replay = json((await cli(['runs', 'replay', parent, '--json', ...d])).lines);
    expect(replay.result).toMatchObject({ divergesAt: null, replayed: 2, steps: 2 });
    const manifest = join(dataDir, 'changed.yaml');
    writeFileSync(manifest, AGENT.replace('"First draft"', '"Another first draft"'));
    const replayed = json((await cli(['runs', 'replay', parent, '--manifest', manifest, '--json', ...d])).lines);
    expect(replayed.result.divergesAt).toMatchObject({ step: 0, reason: 'arguments' });
  });

  it('refuses a step that is not a number, a manifest file that is not there, a model that is not provider:model, and a step past the run', { timeout: 60_000 }, async () => {
    process.env.AGENTPLANE_DEMO_PEERS = '0';
    const dataDir = tempDataDir('ap-cli-fork-bad-');
    mkdirSync(join(dataDir, 'agents'), { recursive: true });
    writeFileSync(join(dataDir, 'agents', 'two-drafts.yaml'), AGENT);
    const d = ['--data-dir', dataDir];
    const parent = String(json((await cli(['run', 'two-drafts', '--input', '{"topic":"x"}', '--wait', '--json', ...d])).lines).result.runId);
    expect((await cli(['runs', 'fork', parent, '--at', 'two', ...d])).lines.join('\n')).toContain('a step number (0 for the first step)');
    expect((await cli(['runs', 'fork', parent, '--at', '1', '--manifest', join(dataDir, 'nope.yaml'), ...d])).lines.join('\n')).toMatch(/cannot read .*nope\.yaml \(ENOENT\)/);
    expect((await cli(['runs', 'replay', parent, '--model', 'gpt', ...d])).lines.join('\n')).toContain('a model as provider:model');
    const past = await cli(['runs', 'fork', parent, '--at', '9', '--json', ...d]);
    expect(json(past.lines)).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST' } });
    expect(json(past.lines).error!.message).toContain(`run ${parent} has 2 steps (0 to 1)`);
    expect(past.code).toBe(1);
  });
});
