/**
 * The data dir check covers the whole tree the plane trusts, not only the top folder: every folder and file the plane reads secrets or state from must be ours and
 * writable by nobody else (secrets: readable by nobody else either), and no folder above the data
 * dir may let another user swap it (group- or world-writable without the sticky bit, or owned by
 * someone other than root or us). Each refusal names the path, what is wrong and the command
 * that fixes it; each way in (resolveDataDir, Journal.open, createPlane) refuses the same way.
 *
 * We run these as root in CI, and root passes every permission check: so the tests exercise the
 * plane's own stat-based checks, and "owned by someone else" is a chown to 65534.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { journalPath } from '../journal/sqlite-store';
import { resolveDataDir } from '../base/app-paths';
import { UnsafeDataDirError } from '../base/data-dir-guard';
import { createLogger, silentLogger } from '../base/logger';
import { createLocalProvider } from '../providers/local-provider';
import { builtinTools, workspaceOf } from '../runtime/tools';
import { PeerRegistry } from '../peers/peer-registry';
import { writeRevocations } from '../peers/revocation-file';
import { addMcpServer } from '../protocols/mcp/client/mcp-servers-file';
import { createPlane } from './plane';
import { resourcesDir } from './plane-config';
import { writePlaneFile } from './plane-file';
import { rememberUiAddress } from './ui-address';
import { startPlaneMcpEndpoint } from './mcp-endpoint';
import { startPlaneA2aEndpoint } from './a2a-endpoint';
import { A2aPins } from '../protocols/a2a/client/a2a-pins';
import { PushStore } from '../protocols/a2a/push-store';
import { ProviderSettingsStore } from './provider-settings';
import { NetAllowStore } from './net-allow';
import { settingsFromEnv, startPeer } from './peer-host';
import { call } from '../../tests/support/runtime-support';
import { useTempFolders, useUmask } from '../../tests/helpers/temp-folders';

const folder = useTempFolders('ap-tree-guard-');
useUmask(0o022);

const posix = process.platform !== 'win32';
const root = process.getuid?.() === 0;
const uid = process.getuid?.() ?? 0;

/** A data dir a plane has used: keys/, checkpoints/, the journal, peers/ with registry.json and two peers. */
async function usedDataDir(parent?: string): Promise<string> {
  const dir = parent ? join(parent, 'data') : folder();
  const plane = await createPlane({ dataDir: dir, version: 'test', host: 'headless', demoPeers: true });
  try {
    await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'a private input' } });
  } finally {
    await plane.close();
  }
  return dir;
}

/** The refusal each way in gives, or null when it accepted the data dir (then closed again). */
async function refusals(dataDir: string): Promise<Array<{ way: string; error: unknown }>> {
  const found: Array<{ way: string; error: unknown }> = [];
  try {
    resolveDataDir(dataDir);
    found.push({ way: 'resolveDataDir', error: null });
  } catch (error) {
    found.push({ way: 'resolveDataDir', error });
  }
  found.push({
    way: 'Journal.open',
    error: await Journal.open({ dataDir }).then(
      async (journal) => (await journal.close(), null),
      (error: unknown) => error,
    ),
  });
  found.push({
    way: 'createPlane',
    error: await createPlane({ dataDir, version: 'test', host: 'headless' }).then(
      async (plane) => (await plane.close(), null),
      (error: unknown) => error,
    ),
  });
  return found;
}

/** Every way in refuses `dataDir`, naming `path`, the reason and the exact fix command. */
async function expectRefused(dataDir: string, path: string, why: RegExp, fix: string): Promise<void> {
  for (const { way, error } of await refusals(dataDir)) {
    expect(error, `${way} accepted ${dataDir} with ${path} as it is`).toBeInstanceOf(UnsafeDataDirError);
    const message = (error as Error).message;
    expect(message, way).toContain(path);
    expect(message, way).toMatch(why);
    expect(message, way).toContain(fix);
  }
}

async function expectAccepted(dataDir: string): Promise<void> {
  for (const { way, error } of await refusals(dataDir)) expect(error, way).toBeNull();
}

const q = (path: string) => `'${path}'`;

describe.runIf(posix)('inside the data dir: every folder and file the plane trusts', () => {
  it.runIf(root)('refuses keys/ owned by another uid, naming it and `chown -R`', async () => {
    const dir = await usedDataDir();
    const keys = join(dir, 'keys');
    chownSync(keys, 65534, 65534);
    await expectRefused(dir, keys, /owned by uid 65534, not by you \(uid 0\)/, `chown -R ${uid} ${q(keys)}`);
  });

  it('refuses keys/ at 0777, naming it and `chmod 700`', async () => {
    const dir = await usedDataDir();
    const keys = join(dir, 'keys');
    chmodSync(keys, 0o777);
    await expectRefused(dir, keys, /writable by group or others \(mode 0777\)/, `chmod 700 ${q(keys)}`);
  });

  it('refuses peers/ at 0777', async () => {
    const dir = await usedDataDir();
    const peers = join(dir, 'peers');
    chmodSync(peers, 0o777);
    await expectRefused(dir, peers, /writable by group or others \(mode 0777\)/, `chmod 700 ${q(peers)}`);
  });

  it('refuses checkpoints/ at 0777', async () => {
    const dir = await usedDataDir();
    const checkpoints = join(dir, 'checkpoints');
    chmodSync(checkpoints, 0o777);
    await expectRefused(dir, checkpoints, /writable by group or others \(mode 0777\)/, `chmod 700 ${q(checkpoints)}`);
  });

  it('refuses peers/registry.json at 0666, naming it and `chmod 600`', async () => {
    const dir = await usedDataDir();
    const registry = join(dir, 'peers', 'registry.json');
    chmodSync(registry, 0o666);
    await expectRefused(dir, registry, /writable by group or others \(mode 0666\)/, `chmod 600 ${q(registry)}`);
  });

  it('refuses a peer\'s own folder at 0777', async () => {
    const dir = await usedDataDir();
    const alpha = join(dir, 'peers', 'alpha');
    chmodSync(alpha, 0o777);
    await expectRefused(dir, alpha, /writable by group or others \(mode 0777\)/, `chmod 700 ${q(alpha)}`);
  });

  it('refuses a secret others can read (the plane key, a peer\'s secret and identity), naming `chmod 600`', async () => {
    const dir = await usedDataDir();
    for (const [secret, mode] of [
      [join(dir, 'keys', 'plane-ed25519.private.jwk'), 0o644],
      [join(dir, 'peers', 'alpha', 'secret'), 0o640],
      [join(dir, 'peers', 'beta', 'identity.jwk'), 0o604],
    ] as const) {
      chmodSync(secret, mode);
      await expectRefused(dir, secret, new RegExp(`readable by group or others \\(mode 0${mode.toString(8)}\\)`), `chmod 600 ${q(secret)}`);
      chmodSync(secret, 0o600);
    }
    await expectAccepted(dir);
  });

  it.runIf(root)('refuses a file the plane trusts owned by another uid (peers/registry.json)', async () => {
    const dir = await usedDataDir();
    const registry = join(dir, 'peers', 'registry.json');
    chownSync(registry, 65534, 65534);
    await expectRefused(dir, registry, /owned by uid 65534/, `chown ${uid} ${q(registry)}`);
  });

  it('still accepts a journal others can only read (0644, as SQLite made it before): the store makes it 0600', async () => {
    const dir = await usedDataDir();
    chmodSync(journalPath(dir), 0o644);
    await expectAccepted(dir);
    expect(statSync(journalPath(dir)).mode & 0o777).toBe(0o600);
    chmodSync(journalPath(dir), 0o666);
    await expectRefused(dir, journalPath(dir), /writable by group or others \(mode 0666\)/, `chmod 600 ${q(journalPath(dir))}`);
  });

  it('covers every folder and file a running plane and peer keep there: loosening any one is refused, naming it', async () => {
    const dir = folder();
    // What a person writes there by hand, and the plane reads as its own configuration.
    writeFileSync(join(dir, 'policy.json'), readFileSync(join(resourcesDir(), 'policy.json')));
    writeFileSync(join(dir, 'prices.json'), '{"local": {"*": {"input": 0, "output": 0}}}\n');
    mkdirSync(join(dir, 'agents'));
    writeFileSync(join(dir, 'agents', 'mine.yaml'), readFileSync(join(resourcesDir(), 'agents', 'summarize.yaml'), 'utf8').replace('name: summarize', 'name: mine'));
    // A plane with its endpoints, running: its lock, the journal's -wal and -shm, its address files.
    const plane = await createPlane({ dataDir: dir, version: 'test', host: 'headless', demoPeers: true, logger: createLogger(join(dir, 'plane.log'), () => undefined) });
    const stops: Array<() => Promise<void>> = [() => plane.close()];
    try {
      await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'a private input' } });
      const mcp = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
      stops.unshift(() => mcp.close());
      const a2a = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
      stops.unshift(() => a2a.close());
      // What the plane's other writers leave, each through its own module.
      writePlaneFile(dir, { pid: process.pid, url: 'http://127.0.0.1:9', port: 9, token: 't', startedAt: new Date().toISOString() });
      rememberUiAddress(dir, { port: 9, token: 'u'.repeat(32) });
      await new ProviderSettingsStore(dir).set('anthropic', { apiKey: 'sk-ant-api03-tree-guard-test-key-00000000' });
      new NetAllowStore(dir).add('https://example.com');
      addMcpServer(dir, 'files', { transport: 'stdio', command: 'true', args: [], env: { TOKEN: 'a-server-secret' } });
      new A2aPins(dir).judge('https://agents.example.com', 'k1', { kty: 'OKP', crv: 'Ed25519', x: 'b2xk' });
      const push = { taskId: 't1', owner: 'mcp:local', url: 'https://hooks.example.com/a', token: 'push-token' };
      new PushStore(dir).put(push);
      await builtinTools.get('file.write')!.run({ path: 'notes/a.md', content: 'a note' }, { workspace: workspaceOf(dir) });
      // A peer running (in this process, as `peer start` runs it), with its logs, port file,
      // revocations and push store.
      const registry = new PeerRegistry(dir);
      const peerDir = join(registry.dir, 'alpha');
      writeRevocations(join(peerDir, 'revoked.jsonl'), []);
      new PushStore(peerDir).put(push);
      const peer = await startPeer({
        dataDir: dir,
        record: registry.get('alpha')!,
        settings: settingsFromEnv({}),
        logger: createLogger(join(peerDir, 'peer.jsonl'), () => undefined),
        portFile: join(peerDir, 'port'),
        providers: new Map([['local', createLocalProvider()]]),
      });
      stops.unshift(() => peer.close());
      createLogger(join(peerDir, 'peer.log'), () => undefined).log('warn', 'a line');

      // Content folders (the workspace, a peer's file store and blobs) are checked as folders;
      // what people and agents put in them is content, not something the plane trusts.
      const content = new Set(['workspace', 'peers/alpha/files', 'peers/alpha/staging', 'peers/alpha/inputs']);
      const entries: string[] = [];
      const walk = (at: string) => {
        for (const name of readdirSync(at)) {
          const path = join(at, name);
          entries.push(path);
          if (lstatSync(path).isDirectory() && !content.has(relative(dir, path))) walk(path);
        }
      };
      walk(dir);
      expect(entries.map((p) => relative(dir, p))).toEqual(
        expect.arrayContaining([
          'keys', 'keys/plane-ed25519.private.jwk', 'checkpoints', 'journal.sqlite', 'journal.sqlite-wal', 'journal.sqlite-shm', 'plane.lock',
          'transcripts.sqlite', 'transcripts.sqlite-wal', 'transcripts.sqlite-shm',
          'plane.json', 'ui.json', 'mcp-address.json', 'a2a-address.json', 'providers.json', 'mcp-servers.json', 'a2a-pins.json', 'a2a-push.json', 'net-allow.json',
          'policy.json', 'prices.json', 'agents/mine.yaml', 'workspace', 'plane.log',
          'peers/registry.json', 'peers/alpha/secret', 'peers/alpha/identity.jwk', 'peers/alpha/peer.lock', 'peers/alpha/port', 'peers/alpha/revoked.jsonl', 'peers/alpha/a2a-push.json', 'peers/alpha/peer.jsonl', 'peers/alpha/files',
        ]),
      );
      const uncovered: string[] = [];
      for (const path of entries) {
        const before = lstatSync(path);
        if (before.isSymbolicLink()) continue;
        chmodSync(path, before.isDirectory() ? 0o777 : 0o666);
        try {
          resolveDataDir(dir);
          uncovered.push(relative(dir, path));
        } catch (error) {
          if (!(error instanceof UnsafeDataDirError) || !error.message.includes(path)) uncovered.push(`${relative(dir, path)}: ${(error as Error).message}`);
        } finally {
          chmodSync(path, before.mode & 0o7777);
        }
      }
      expect(uncovered).toEqual([]);
      expect(() => resolveDataDir(dir)).not.toThrow();
    } finally {
      for (const stop of stops) await stop();
    }
    await expectAccepted(dir);
  });
});

describe.runIf(posix)('above the data dir: no folder another user could swap it in', () => {
  it('refuses a parent others can write (0777) without the sticky bit, naming it and the fix', async () => {
    const parent = folder();
    await usedDataDir(parent);
    chmodSync(parent, 0o777);
    await expectRefused(join(parent, 'data'), parent, /writable by group or others \(mode 0777\) and has no sticky bit/, `chmod go-w ${q(parent)}`);
  });

  it('refuses a parent its group can write (0775) without the sticky bit', async () => {
    const parent = folder();
    await usedDataDir(parent);
    chmodSync(parent, 0o775);
    await expectRefused(join(parent, 'data'), parent, /writable by group or others \(mode 0775\) and has no sticky bit/, `chmod go-w ${q(parent)}`);
  });

  it('refuses a grandparent others can write, and one reached through a link', async () => {
    const grandparent = folder();
    const parent = join(grandparent, 'mid');
    mkdirSync(parent, { mode: 0o755 });
    await usedDataDir(parent);
    chmodSync(grandparent, 0o777);
    await expectRefused(join(parent, 'data'), grandparent, /mode 0777\) and has no sticky bit/, `chmod go-w ${q(grandparent)}`);
    chmodSync(grandparent, 0o700);
    // The link itself sits in a folder others can write: they could point it elsewhere.
    const open = folder();
    chmodSync(open, 0o777);
    const link = join(open, 'link');
    symlinkSync(parent, link);
    await expectRefused(join(link, 'data'), open, /mode 0777\) and has no sticky bit/, `chmod go-w ${q(open)}`);
  });

  it.runIf(root)('refuses a parent owned by another uid (its owner can replace what is under it)', async () => {
    const parent = folder();
    await usedDataDir(parent);
    chmodSync(parent, 0o755);
    chownSync(parent, 65534, 65534);
    await expectRefused(join(parent, 'data'), parent, /owned by uid 65534/, `chown ${uid} ${q(parent)}`);
  });

  it('accepts a sticky parent others can write (1777, as /tmp is)', async () => {
    const parent = folder();
    chmodSync(parent, 0o1777);
    const dir = await usedDataDir(parent);
    await expectAccepted(dir);
    expect(statSync(parent).mode & 0o7777).toBe(0o1777);
  });
});
