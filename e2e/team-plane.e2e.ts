/**
 * A team plane on PostgreSQL, as two people run it: two `agentplane serve` processes, each with
 * its own data dir (its own key), on one database. One serves the journal; the other waits,
 * saying who serves it. A run that needs approval is started at A; A is killed with SIGKILL;
 * B takes over (the lease PostgreSQL held for A ends with A's session), finds the run waiting,
 * and it is approved by a click in B's UI; B finishes it. The effect happened once, the
 * exported journal verifies, and the database password appears nowhere a person or a file
 * would show it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../src-shared/ipc/client';
import { createHttpTransport } from '../src-main/cli/http-transport';
import { launchChromium, requireChromium } from './support/chromium';
import { childEnv, CLI, closeServeAndBrowser, makeTempDir, REPO_ROOT, requireBuild, startServe, type ServeProcess } from './support/serve-process';
import { POLL, sectionButton, sectionHeading } from './support/shell-checks';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../tests/support/postgres-support';

/** Every file under `dir`, as text (small planes: a few dozen files). */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  const found: Array<{ file: string; text: string }> = [];
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = join(dir, name);
    if (statSync(file).isFile()) found.push({ file, text: readFileSync(file, 'latin1') });
  }
  return found;
}

describe.skipIf(!postgresUrl())(`two plane instances on one PostgreSQL journal${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, () => {
  let database = '';
  let password = '';
  let dirA = '';
  let dirB = '';
  let a: ServeProcess | undefined;
  let b: ServeProcess | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  const linesB: string[] = [];

  beforeAll(async () => {
    requireBuild();
    requireChromium();
    database = await freshDatabase('team');
    password = new URL(database).password;
    dirA = makeTempDir('team-a');
    dirB = makeTempDir('team-b');
  });

  afterAll(async () => {
    await closeServeAndBrowser(context, b, { dirs: [dirB] });
    a?.dispose();
  });

  it('serve refuses a database it cannot use in one line, the password masked, before anything starts', () => {
    const wrong = new URL(database);
    wrong.password = 'wrong-s3cret';
    const refused = spawnSync(process.execPath, [CLI, 'serve', '--no-open', '--ui-port', '0', '--data-dir', makeTempDir('team-refused'), '--database', wrong.toString()], { cwd: REPO_ROOT, env: childEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/refused the login: password authentication failed for user "postgres"/);
    expect(refused.stderr + refused.stdout).not.toContain('wrong-s3cret');
    expect(refused.stdout).not.toContain('AGENTPLANE_UI_URL=');
    const notPostgres = spawnSync(process.execPath, [CLI, 'serve', '--no-open', '--data-dir', makeTempDir('team-refused'), '--database', 'mysql://ann:s3cret@db/plane'], { cwd: REPO_ROOT, env: childEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(notPostgres.status).toBe(1);
    expect(notPostgres.stderr).toMatch(/--database must be a postgres:\/\/ or postgresql:\/\/ URL, not mysql:/);
    expect(notPostgres.stderr).not.toContain('s3cret');
  });

  it('A serves, B waits; A killed with SIGKILL; B takes over and finishes the run approved by a click in its UI; the effect happened once', async () => {
    a = await startServe({ dataDir: dirA, env: { AGENTPLANE_DATABASE_URL: database } });
    expect(a.stdoutLines).toContain(`Journal shared in PostgreSQL at ${database.replace(`:${password}@`, ':***@')}`);
    const clientA: PlaneClient = createPlaneClient(createHttpTransport({ url: a.origin, token: a.token }));
    expect((await clientA.call('plane.status', {})).journal).toBe(database.replace(`:${password}@`, ':***@'));

    // B starts on the same database and waits, naming who serves the journal.
    let waitingSeen!: () => void;
    const waiting = new Promise<void>((resolve) => (waitingSeen = resolve));
    const startingB = startServe({
      dataDir: dirB,
      env: { AGENTPLANE_DATABASE_URL: database },
      timeoutMs: 120_000,
      onLine: (line) => {
        linesB.push(line);
        if (line.startsWith('Waiting: ')) waitingSeen();
      },
    });
    await waiting;
    expect(linesB.find((line) => line.startsWith('Waiting: '))).toMatch(new RegExp(`^Waiting: process ${a.pid} on .+ \\(data dir ${dirA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, since .+\\) serves this journal; this instance takes over when it stops\\.$`));

    const { runId } = await clientA.call('runs.start', { agent: 'write-note', input: { title: 'Team note', topic: 'two instances, one journal' } });
    await expect.poll(async () => (await clientA.call('runs.list', {})).runs.find((r) => r.runId === runId)?.status, POLL).toBe('suspended');

    a.child.kill('SIGKILL');
    await a.exited;
    b = await startingB;
    const clientB = createPlaneClient(createHttpTransport({ url: b.origin, token: b.token }));
    // B lists the run A started: one journal.
    expect((await clientB.call('runs.list', {})).runs.find((r) => r.runId === runId)?.status).toBe('suspended');

    context = await launchChromium(makeTempDir('team-chromium'));
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(b.url);
    await sectionButton(page, 'Approvals').click();
    await sectionHeading(page, 'Approvals').waitFor();
    const item = page.getByRole('article', { name: 'Approval needed: write-note' });
    await item.waitFor();
    expect(await item.textContent()).toContain(runId);
    // The shared journal is named in the status bar, its password masked.
    expect(await page.getByLabel('Shared journal').textContent()).toContain(':***@');
    expect(await page.content()).not.toContain(password);
    // The approval A asked for named A's workspace. Approved at B, where the write would land in
    // B's workspace, it is not taken for this other effect: the run asks again, naming B's.
    expect(await item.textContent()).toContain(join(dirA, 'workspace'));
    await item.getByRole('button', { name: 'Approve', exact: true }).click();
    await expect.poll(async () => (await item.textContent().catch(() => '')) ?? '', POLL).toContain(join(dirB, 'workspace'));
    await item.getByRole('button', { name: 'Approve', exact: true }).click();
    await expect.poll(async () => (await clientB.call('runs.list', {})).runs.find((r) => r.runId === runId)?.outcome, POLL).toBe('succeeded');

    // The write happened once: one effect started and done for it in the journal, one file, at B.
    const effects = await sql(database, "SELECT kind, body FROM agentplane.records WHERE run_id = $1 AND kind IN ('EffectStarted', 'EffectDone') ORDER BY seq", [runId]);
    const bodies = effects.rows.map((row: { kind: string; body: string }) => ({ kind: row.kind, ...(JSON.parse(row.body) as { name?: string; key: string }) }));
    const writes = bodies.filter((b) => b.kind === 'EffectStarted' && b.name === 'file.write');
    expect(writes).toHaveLength(1);
    expect(bodies.filter((b) => b.kind === 'EffectDone' && b.key === writes[0]!.key)).toHaveLength(1);
    expect(existsSync(join(dirB, 'workspace', 'notes', 'Team note.md'))).toBe(true);
    expect(existsSync(join(dirA, 'workspace', 'notes', 'Team note.md'))).toBe(false);

    // The exported journal verifies offline, vouched for by B's checkpoints (which cover A's records too).
    const bundle = join(makeTempDir('team-bundle'), 'team.jsonl');
    const env = childEnv({ AGENTPLANE_DATABASE_URL: database });
    execFileSync(process.execPath, [CLI, 'journal', 'export', '--data-dir', dirB, '--out', bundle], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    expect(execFileSync(process.execPath, [CLI, 'journal', 'verify', bundle], { cwd: REPO_ROOT, env, encoding: 'utf8' })).toMatch(/^OK \d+ records, root [0-9a-f]{64}/);

    // The password: in no output, no file of either data dir, no record of the journal.
    expect([...a.stdoutLines, ...linesB, a.stderr(), b.stderr()].join('\n')).not.toContain(password);
    for (const { file, text } of [...filesUnder(dirA), ...filesUnder(dirB)]) expect(text.includes(password), file).toBe(false);
    expect((await sql(database, 'SELECT COUNT(*)::int AS n FROM agentplane.records WHERE body LIKE $1', [`%${password}%`])).rows[0]).toEqual({ n: 0 });
  });
});
