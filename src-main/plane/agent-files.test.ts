/**
 * The person's own agent files (<data dir>/agents): one broken file never stops the plane (it
 * is listed as broken, with its file, the field and the fix, and refused by name), and files
 * added, changed or removed while the plane runs are picked up without a restart, by the
 * folder's watch or by `agents.reload`, which says what changed. A real plane on a real data
 * dir; each wait polls the contract or waits for the plane's event, never a fixed sleep.
 */
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from './plane';
import type { PlaneEvent } from '../../src-shared/ipc/contract';
import { tempDataDir } from '../../tests/support/journal-support';
import { call, failure, testPlane } from '../../tests/support/runtime-support';

const BAD = 'name: bad\ndescription: has no input schema\nsteps:\n  - model: { provider: local, prompt: hi }\ngrants:\n  - { kind: model, name: local }\n';
const good = (name: string, description = 'says hi') =>
  `name: ${name}\ndescription: ${description}\ninput: { type: object }\nsteps:\n  - model: { provider: local, prompt: hi }\ngrants:\n  - { kind: model, name: local }\n`;

/** The poll the tests wait with: the contract asked again until the answer holds. */
const POLL = { timeout: 10_000, interval: 25 };

const open: Plane[] = [];
afterEach(async () => {
  for (const plane of open.splice(0).reverse()) await plane.close();
});

async function planeOn(dataDir: string, options: { watchAgentFiles?: boolean } = {}): Promise<Plane> {
  const plane = await testPlane({ dataDir, env: {}, ...options });
  open.push(plane);
  return plane;
}

function agentsFolder(dataDir: string): string {
  const dir = join(dataDir, 'agents');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Writes a file as editors do: a temporary beside it, then renamed over it. */
function saveAsEditor(path: string, text: string): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}

const runnable = async (plane: Plane) => (await call(plane, 'agents.list', {})).agents.map((a) => a.name);
const brokenNames = async (plane: Plane) => (await call(plane, 'agents.list', {})).broken.map((b) => b.name);

describe('a broken agent file', () => {
  it('does not stop the plane: the file is listed as broken with the field and the fix, refused by name, and the other agents run', async () => {
    const dataDir = tempDataDir('ap-agent-files-');
    const own = agentsFolder(dataDir);
    writeFileSync(join(own, 'bad.yaml'), BAD, { mode: 0o600 });
    writeFileSync(join(own, 'good.yaml'), good('good'), { mode: 0o600 });
    writeFileSync(join(own, 'clash.yaml'), good('summarize'), { mode: 0o600 });
    const plane = await planeOn(dataDir);

    const listed = await call(plane, 'agents.list', {});
    expect(listed.agents.map((a) => a.name)).toEqual(expect.arrayContaining(['good', 'summarize', 'write-note']));
    expect(listed.agents.map((a) => a.name)).not.toContain('bad');
    expect(listed.broken).toEqual([
      expect.objectContaining({ name: 'bad', source: join(own, 'bad.yaml'), field: 'input', problem: expect.stringMatching(/^the manifest has no input schema: add `input:`/) }),
      expect.objectContaining({ name: 'summarize', source: join(own, 'clash.yaml'), field: 'name', problem: expect.stringMatching(/an agent named summarize is already declared in .*summarize\.yaml/) }),
    ]);
    // The bundled summarize is the one that runs; the clashing file's agent is not.
    expect(listed.agents.find((a) => a.name === 'summarize')?.source).not.toContain(own);

    const refused = await failure(plane, 'runs.start', { agent: 'bad', input: {} });
    expect(refused.code).toBe('AP_CONFLICT');
    expect(refused.message).toMatch(/^agent bad is broken: .*bad\.yaml: input: the manifest has no input schema: add `input:`/);
    expect(refused.message).not.toContain('no agent named');

    const run = await call(plane, 'runs.start', { agent: 'good', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
  });
});

describe('agent files while the plane runs', () => {
  it('a file added (by an editor, into a folder made after the start) becomes runnable, a changed one changes, a removed one goes: announced as agents.changed', async () => {
    const dataDir = tempDataDir('ap-agent-files-');
    const plane = await planeOn(dataDir);
    const events: PlaneEvent[] = [];
    plane.events.subscribe((event) => events.push(event));
    expect(await runnable(plane)).not.toContain('fresh');

    // The folder does not exist when the plane starts.
    const own = agentsFolder(dataDir);
    saveAsEditor(join(own, 'fresh.yaml'), good('fresh'));
    await expect.poll(() => runnable(plane), POLL).toContain('fresh');
    expect(await call(plane, 'runs.start', { agent: 'fresh', input: {}, wait: true })).toMatchObject({ outcome: 'succeeded' });
    const announced = events.filter((e) => e.name === 'agents.changed');
    expect(announced.length).toBeGreaterThan(0);
    expect(announced.at(-1)!.payload).toMatchObject({ agents: expect.arrayContaining([expect.objectContaining({ name: 'fresh' })]), broken: [] });

    saveAsEditor(join(own, 'fresh.yaml'), good('fresh', 'says hello now'));
    await expect.poll(async () => (await call(plane, 'agents.list', {})).agents.find((a) => a.name === 'fresh')?.description, POLL).toBe('says hello now');

    saveAsEditor(join(own, 'fresh.yaml'), BAD.replace('name: bad', 'name: fresh'));
    await expect.poll(() => brokenNames(plane), POLL).toEqual(['fresh']);
    expect(await runnable(plane)).not.toContain('fresh');
    expect((await failure(plane, 'runs.start', { agent: 'fresh', input: {} })).message).toMatch(/agent fresh is broken: .*no input schema/);

    rmSync(join(own, 'fresh.yaml'));
    await expect.poll(() => brokenNames(plane), POLL).toEqual([]);
    expect(await runnable(plane)).not.toContain('fresh');
    expect((await failure(plane, 'runs.start', { agent: 'fresh', input: {} })).message).toMatch(/no agent named fresh/);
  });

  it('a file others may write is not trusted while the plane runs: broken, with the chmod that fixes it', async () => {
    const dataDir = tempDataDir('ap-agent-files-');
    const own = agentsFolder(dataDir);
    const plane = await planeOn(dataDir);
    const path = join(own, 'open.yaml');
    writeFileSync(path, good('open'), { mode: 0o600 });
    chmodSync(path, 0o666);
    await expect.poll(() => brokenNames(plane), POLL).toEqual(['open']);
    expect((await call(plane, 'agents.list', {})).broken[0]!.problem).toContain(`chmod 600 '${path}'`);
    expect(await runnable(plane)).not.toContain('open');
  });

  it('agents.reload reads the folder on demand and reports what was added, changed, removed and broken', async () => {
    const dataDir = tempDataDir('ap-agent-files-');
    const own = agentsFolder(dataDir);
    writeFileSync(join(own, 'a.yaml'), good('a'), { mode: 0o600 });
    writeFileSync(join(own, 'd.yaml'), good('d'), { mode: 0o600 });
    // No watch: what changed is seen by the reload alone.
    const plane = await planeOn(dataDir, { watchAgentFiles: false });
    expect(await runnable(plane)).toEqual(expect.arrayContaining(['a', 'd']));

    writeFileSync(join(own, 'a.yaml'), good('a', 'changed'), { mode: 0o600 });
    writeFileSync(join(own, 'b.yaml'), good('b'), { mode: 0o600 });
    writeFileSync(join(own, 'c.yaml'), BAD.replace('name: bad', 'name: c'), { mode: 0o600 });
    rmSync(join(own, 'd.yaml'));
    const report = await call(plane, 'agents.reload', {});
    expect(report).toEqual({
      added: ['b'],
      changed: ['a'],
      removed: ['d'],
      broken: [expect.objectContaining({ name: 'c', source: join(own, 'c.yaml'), field: 'input' })],
    });
    expect(await runnable(plane)).toEqual(expect.arrayContaining(['a', 'b']));
    expect(await runnable(plane)).not.toContain('d');

    // Nothing changed since: nothing to report but what is still broken.
    expect(await call(plane, 'agents.reload', {})).toEqual({ added: [], changed: [], removed: [], broken: [expect.objectContaining({ name: 'c' })] });
  });
});
