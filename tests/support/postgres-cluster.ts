/**
 * A throwaway PostgreSQL cluster for the tests: initdb in a fresh temporary folder, started with
 * pg_ctl on 127.0.0.1 at a free port (nothing listens beyond loopback; the Unix socket lives in
 * the same temporary folder), a password for the superuser over TCP, and removed when stopped.
 * Debian's `postgresql` package provides the binaries (.ci/run installs it); as root, the
 * cluster runs as the `postgres` user, since PostgreSQL refuses to run as root.
 *
 * Never the system service: a test must not depend on, or touch, a database someone runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PostgresCluster {
  /** postgres://postgres:<password>@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  stop(): void;
}

/** The folder of Debian's PostgreSQL binaries (the newest version installed), or null. */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return which.status === 0 && found ? join(found, '..') : null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Runs a PostgreSQL binary as the cluster's user: `postgres` when this process is root. */
function runAsClusterUser(bin: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinaries();
  if (!bin) throw new Error("PostgreSQL's binaries are not installed (Debian: apt-get install postgresql)");
  const folder = mkdtempSync(join(tmpdir(), 'agentplane-pg-'));
  const dataDir = join(folder, 'data');
  const password = randomBytes(12).toString('hex');
  const pwfile = join(folder, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(folder, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  chmodSync(folder, 0o700);
  runAsClusterUser(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--pwfile', pwfile, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C']);
  rmSync(pwfile, { force: true });
  const port = await freePort();
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${folder} -c max_connections=200 -c shared_buffers=32MB`;
  runAsClusterUser(join(bin, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', dataDir, '-l', join(folder, 'server.log'), '-o', options]);
  let stopped = false;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    password,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        runAsClusterUser(join(bin, 'pg_ctl'), ['stop', '-w', '-t', '60', '-m', 'fast', '-D', dataDir]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}
