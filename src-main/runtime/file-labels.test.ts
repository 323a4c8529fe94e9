/**
 * A workspace file keeps the label of what was written into it (docs/GOVERNED-RUNTIME.md,
 * "Sensitivity"; file-labels.ts), on a real plane with the local model counted at the provider:
 * a confidential text written by one run and read back by another, unlabelled, run is refused
 * before it reaches a model whose ceiling is internal; the same file rewritten with a public
 * text reads as public again; the labels live outside the workspace, where no file.write reaches.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, callsIn, countingProvider, testPlane } from '../../tests/support/runtime-support';
import type { Plane } from '../plane/plane';
import { FILE_LABELS_FILE, FileLabels } from './file-labels';

const open: Plane[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close().catch(() => undefined);
});

/** Writes its input's text to a file. */
const SAVE = {
  name: 'save',
  steps: [{ as: 'saved', tool: { name: 'file.write', args: { path: '{{input.path}}', content: '{{input.text}}' } } }, { output: '{{steps.saved}}' }],
  grants: [{ kind: 'tool', name: 'file.write' }],
};

/** Reads a file, then sends what it read to the local model. */
const READ_AND_SUMMARISE = {
  name: 'read-and-summarise',
  steps: [
    { as: 'file', tool: { name: 'file.read', args: { path: '{{input.path}}' } } },
    { as: 'summary', model: { provider: 'local', prompt: 'Summarise: {{steps.file.content}}', maxTokens: 8 } },
    { output: '{{steps.summary.text}}' },
  ],
  grants: [
    { kind: 'tool', name: 'file.read' },
    { kind: 'model', name: 'local' },
  ],
};

describe('workspace files keep their label', () => {
  it('a confidential text written to a file is refused when another run reads it and sends it on; rewritten public, it goes', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-file-labels-');
    const counter = join(dataDir, 'model-calls.txt');
    writeFileSync(join(dataDir, 'sensitivity.json'), JSON.stringify({ destinations: { 'model:local': { ceiling: 'internal' } } }));
    const p = await testPlane({ dataDir, agents: [SAVE, READ_AND_SUMMARISE].map(agent), providers: new Map([['local', countingProvider(counter)]]) });
    open.push(p);

    const saved = await call(p, 'runs.start', { agent: 'save', input: { path: 'notes/terms.md', text: 'the merger terms' }, sensitivity: 'confidential', wait: true });
    expect(saved).toMatchObject({ outcome: 'succeeded' });
    expect(new FileLabels(dataDir).get('notes/terms.md')).toBe('confidential');
    // Outside the workspace: no run's file.write can reach the labels.
    expect(existsSync(join(dataDir, FILE_LABELS_FILE))).toBe(true);
    expect(existsSync(join(dataDir, 'workspace', FILE_LABELS_FILE))).toBe(false);

    // Another run, its own input unlabelled, reads the file: the read answers confidential, and the model is not sent it.
    const refused = await call(p, 'runs.start', { agent: 'read-and-summarise', input: { path: 'notes/terms.md' }, wait: true });
    expect(refused).toMatchObject({ outcome: 'failed', error: { code: 'SensitivityCeiling' } });
    expect(refused.error!.message).toContain('confidential value from');
    expect(refused.error!.message).toContain("model:local's ceiling internal");
    expect(callsIn(counter)).toBe(0);
    const read = (await p.journal.readRun(refused.runId, 1, 100)).find((r) => r.kind === 'EffectDone')!;
    expect(read.body).toMatchObject({ sensitivity: 'confidential' });

    // Rewritten with an unlabelled text, the file holds no confidential value any more.
    expect(await call(p, 'runs.start', { agent: 'save', input: { path: 'notes/terms.md', text: 'the lunch menu' }, wait: true })).toMatchObject({ outcome: 'succeeded' });
    expect(new FileLabels(dataDir).get('notes/terms.md')).toBeUndefined();
    expect(await call(p, 'runs.start', { agent: 'read-and-summarise', input: { path: 'notes/terms.md' }, wait: true })).toMatchObject({ outcome: 'succeeded' });
    expect(callsIn(counter)).toBe(1);
  });

  it('a data dir whose runs write nothing labelled gets no label store', async () => {
    const dataDir = tempDataDir('ap-file-labels-');
    const p = await testPlane({ dataDir, agents: [SAVE].map(agent) });
    open.push(p);
    expect(await call(p, 'runs.start', { agent: 'save', input: { path: 'a.txt', text: 'hello' }, wait: true })).toMatchObject({ outcome: 'succeeded' });
    expect(existsSync(join(dataDir, FILE_LABELS_FILE))).toBe(false);
  });
});
