/**
 * The CLI names each model call of a run as `provider:model` (with the model that answered when
 * another did): `run --wait` and `runs show` print one line per call, read from the run's
 * records; `--json` prints the contract's RunView unchanged. Over a real data dir with the
 * bundled `summarize` agent on the local deterministic model, the commands run in this process
 * (the plane opened on the data dir, as the CLI does when none is serving it).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { addRuntimeCommands, modelCallLines } from './runtime-commands';

/** Runs one command in this process; answers the lines it printed. */
async function cli(args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const program = new Command().exitOverride();
  addRuntimeCommands(program, (line) => lines.push(line));
  await program.parseAsync(args, { from: 'user' });
  return lines;
}

describe('model calls in the CLI', () => {
  it('one line per call: asked, answered when another, or the failure', () => {
    const request = (model: string) => ({ provider: { id: 'anthropic', label: 'x' }, model, messages: [] });
    expect(
      modelCallLines([
        { kind: 'EffectStarted', body: { step: 0, effect: 'model', request: request('claude-sonnet-4-5') } },
        { kind: 'EffectDone', body: { step: 0, result: { text: 'a', model: 'claude-sonnet-4-5-20250929' } } },
        { kind: 'EffectStarted', body: { step: 1, effect: 'model', request: request('claude-haiku-4-5') } },
        { kind: 'EffectFailed', body: { step: 1, error: { code: 'ModelRefused', message: 'anthropic: HTTP 400' } } },
      ]),
    ).toEqual(['  model anthropic:claude-sonnet-4-5 → claude-sonnet-4-5-20250929', '  model anthropic:claude-haiku-4-5 · failed: ModelRefused: anthropic: HTTP 400']);
  });

  it('run --wait prints the run’s model calls; runs show --json prints the RunView alone', { timeout: 60_000 }, async () => {
    process.env.AGENTPLANE_DEMO_PEERS = '0'; // this file's own worker: no demo peers to start
    const d = ['--data-dir', tempDataDir('ap-cli-models-')];
    const ran = await cli(['run', 'summarize', '--input', '{"text":"Foxes are quick. Dogs are lazy."}', '--wait', ...d]);
    expect(ran).toContain('  model local:local-deterministic');
    const runId = /^(run-[0-9a-f]+)/.exec(ran[0] ?? '')?.[1];
    expect(runId).toBeDefined();
    const json = await cli(['runs', 'show', runId!, '--json', ...d]);
    expect(json).toHaveLength(1);
    expect(JSON.parse(json[0]!)).toMatchObject({ ok: true, result: { runId, outcome: 'succeeded' } });
    expect(json[0]).not.toContain('  model ');
  });
});

describe('run --sensitivity', () => {
  it("labels the run's input: above the model's ceiling the run fails before the model is called, naming the ceiling", { timeout: 60_000 }, async () => {
    process.env.AGENTPLANE_DEMO_PEERS = '0';
    const dataDir = tempDataDir('ap-cli-sensitivity-');
    writeFileSync(join(dataDir, 'sensitivity.json'), JSON.stringify({ destinations: { 'model:local': { ceiling: 'internal' } } }));
    const d = ['--data-dir', dataDir];
    const refused = JSON.parse((await cli(['run', 'summarize', '--input', '{"text":"Foxes are quick."}', '--sensitivity', 'confidential', '--wait', '--json', ...d]))[0]!);
    expect(refused).toEqual({ ok: false, error: { code: 'AP_CONFLICT', message: expect.stringMatching(/^run run-[0-9a-f]+ failed: SensitivityCeiling: model local: the request carries a confidential value from input\.text, above model:local's ceiling internal; refused before it was sent to model:local$/) } });
    const within = JSON.parse((await cli(['run', 'summarize', '--input', '{"text":"Foxes are quick."}', '--sensitivity', 'internal', '--wait', '--json', ...d]))[0]!);
    expect(within).toMatchObject({ ok: true, result: { outcome: 'succeeded' } });
  });
});
