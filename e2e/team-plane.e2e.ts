/**
 * A team plane on PostgreSQL, as two people run it: two `agentplane serve` processes, each with
 * its own data dir (its own key), on one database, both serving at once. A run that needs
 * approval is started at A and waits in B's inbox too; A is killed with SIGKILL; B takes the
 * run over (A's lease ended with A's session; the takeover is journaled on the run), and it is
 * approved by a click in B's UI; B finishes it. The effect happened once, the exported journal
 * verifies, and the database password appears nowhere a person or a file would show it.
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

  it('A and B serve at once; a run started at A waits in both inboxes; A killed with SIGKILL; B takes it over and finishes it, approved by a click in its UI; the effect happened once', async () => {
    a = await startServe({ dataDir: dirA, env: { AGENTPLANE_DATABASE_URL: database } });
    expect(a.stdoutLines.find((line) => line.startsWith('Journal shared'))).toMatch(new RegExp(`^Journal shared in PostgreSQL at ${database.replace(`:${password}@`, ':***@').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; this instance is plane@\\S+$`));
    const clientA: PlaneClient = createPlaneClient(createHttpTransport({ url: a.origin, token: a.token }));
    expect((await clientA.call('plane.status', {})).journal).toBe(database.replace(`:${password}@`, ':***@'));
    // B starts on the same database and serves beside A: neither waits for the other.
    b = await startServe({ dataDir: dirB, env: { AGENTPLANE_DATABASE_URL: database }, timeoutMs: 120_000, onLine: (line) => linesB.push(line) });
    expect(linesB.some((line) => line.startsWith('Waiting: '))).toBe(false);
    const clientB = createPlaneClient(createHttpTransport({ url: b.origin, token: b.token }));
    const hostA = (await clientA.call('plane.status', {})).instance!;
    const hostB = (await clientB.call('plane.status', {})).instance!;
    expect(hostA).toMatch(/^plane@/);
    expect(hostB).toMatch(/^plane@/);
    expect(hostB).not.toBe(hostA);

    const { runId } = await clientA.call('runs.start', { agent: 'write-note', input: { title: 'Team note', topic: 'two instances, one journal' } });
    await expect.poll(async () => (await clientA.call('runs.list', {})).runs.find((r) => r.runId === runId)?.status, POLL).toBe('suspended');
    // One journal, one inbox: B lists the run A holds, waiting, before anything happens to A.
    await expect.poll(async () => (await clientB.call('approvals.list', {})).waiting.some((w) => w.runId === runId), POLL).toBe(true);
    expect((await clientB.call('runs.get', { runId })).host).toBe(hostA);

    a.child.kill('SIGKILL');
    await a.exited;
    // B finds A's lease ended and takes its run over, journaling it on the run.
    await expect.poll(async () => (await clientB.call('runs.get', { runId })).host, POLL).toBe(hostB);
    const adopted = await sql(database, "SELECT body FROM agentplane.records WHERE run_id = $1 AND kind = 'RunAdopted'", [runId]);
    expect(adopted.rows.map((row: { body: string }) => JSON.parse(row.body) as unknown)).toEqual([{ from: hostA, to: hostB, reason: expect.stringContaining(`the lease of ${hostA} ended`) }]);
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
    expect(await page.getByLabel('Instance').textContent()).toBe(hostB);
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

    // The exported journal verifies offline against the journal's keyring: both instances
    // admitted their keys, and the bundle carries checkpoints signed by each.
    const bundle = join(makeTempDir('team-bundle'), 'team.jsonl');
    const env = childEnv({ AGENTPLANE_DATABASE_URL: database });
    execFileSync(process.execPath, [CLI, 'journal', 'export', '--data-dir', dirB, '--out', bundle], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    const keys = JSON.parse(execFileSync(process.execPath, [CLI, 'journal', 'keys', '--data-dir', dirB, '--json'], { cwd: REPO_ROOT, env, encoding: 'utf8' })) as { keys: Array<{ keyId: string }> };
    const keyIds = keys.keys.map((k) => k.keyId);
    expect(keyIds).toHaveLength(2);
    expect(keyIds.map((id) => `plane@${id.slice(0, 12)}`).sort()).toEqual([hostA, hostB].sort());
    const signers = new Set(
      readFileSync(bundle, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('{"checkpoint":'))
        .map((line) => (JSON.parse(Buffer.from((JSON.parse(line) as { checkpoint: string }).checkpoint.split('.')[1]!, 'base64url').toString('utf8')) as { keyId: string }).keyId),
    );
    expect([...signers].sort()).toEqual([...keyIds].sort());
    const verified = execFileSync(process.execPath, [CLI, 'journal', 'verify', bundle], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    expect(verified).toMatch(/^OK \d+ records, root [0-9a-f]{64}/);
    expect(verified).toContain('keys: 2 signed');

    // The password: in no output, no file of either data dir, no record of the journal.
    expect([...a.stdoutLines, ...linesB, a.stderr(), b.stderr()].join('\n')).not.toContain(password);
    for (const { file, text } of [...filesUnder(dirA), ...filesUnder(dirB)]) expect(text.includes(password), file).toBe(false);
    expect((await sql(database, 'SELECT COUNT(*)::int AS n FROM agentplane.records WHERE body LIKE $1', [`%${password}%`])).rows[0]).toEqual({ n: 0 });
  });
});
