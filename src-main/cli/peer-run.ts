/**
 * `agentplane peer start`: one MCPv2 peer in this process, in the foreground, until Ctrl-C or
 * SIGTERM (or, for a peer the plane supervises, until the plane's pipe closes). Loaded by
 * peer-commands.ts only when that command runs: the peer's server, journal, skills and MCP
 * surface are most of what the CLI can load, and no other `peer` subcommand needs them.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { writePrivateFileAtomically } from '../base/private-files';
import { CustomSkillError } from '../peers/custom-skills';
import { watchParent } from '../peers/parent-watchdog';
import { PeerRegistry, RegistryError, type PeerRecord } from '../peers/peer-registry';
import { PeerStartError, settingsFromEnv, startPeer } from '../plane/peer-host';
import { CliError } from './cli-error';

type Out = (line: string) => void;

export interface StartFlags {
  peerId?: string;
  name?: string;
  port?: number;
  secret?: string;
  secretFile?: string;
  publicIp?: string;
  bindHost?: string;
  portFallback?: boolean;
  portFile?: string;
  llmMode?: boolean;
  auth?: PeerRecord['auth'];
  customSkills?: string;
  dataDir?: string;
  demoSession?: boolean;
  watchFd?: number;
  keep?: boolean;
}

/**
 * The registry entry this start uses: the named peer, or one made from the mcpv2.py-style flags.
 * A peer made here is ad hoc, so it is ephemeral (it leaves the registry when this process
 * stops) unless --keep is given; one already registered keeps its standing, and --keep makes
 * an ephemeral one permanent.
 */
function peerFor(registry: PeerRegistry, flags: StartFlags, env: ReturnType<typeof settingsFromEnv>): PeerRecord {
  const port = flags.port ?? env.port;
  // Without a name or id the port names the peer; port 0 ("any free port") names nothing, so
  // each such start gets a peer of its own rather than sharing one file store.
  const id =
    flags.peerId ??
    (flags.name ? flags.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') : port === 0 ? `peer-${randomBytes(3).toString('hex')}` : `peer-${port}`);
  try {
    let record = registry.get(id);
    if (!record) {
      return registry.create({
        id,
        name: flags.name ?? id,
        port,
        ...(flags.publicIp ? { publicIp: flags.publicIp } : {}),
        ...(flags.bindHost ? { bindHost: flags.bindHost } : {}),
        portFallback: flags.portFallback ?? false,
        llmMode: flags.llmMode ?? env.llmMode,
        auth: flags.auth ?? 'both',
        ...(flags.customSkills ? { customSkills: flags.customSkills } : {}),
        ...((flags.secret ?? env.secret) ? { secret: flags.secret ?? env.secret } : {}),
        ephemeral: !flags.keep,
      });
    }
    // Flags given explicitly update the peer for this and later starts.
    record = registry.update(id, (r) => ({
      ...r,
      ...(flags.port !== undefined ? { port: flags.port } : {}),
      ...(flags.publicIp ? { publicIp: flags.publicIp } : {}),
      ...(flags.bindHost ? { bindHost: flags.bindHost } : {}),
      ...(flags.portFallback ? { portFallback: true } : {}),
      ...(flags.llmMode ? { llmMode: true } : {}),
      ...(flags.auth ? { auth: flags.auth } : {}),
      ...(flags.customSkills ? { customSkills: flags.customSkills } : {}),
      ...(flags.keep ? { ephemeral: false } : {}),
    }));
    const secret = flags.secret ?? env.secret;
    if (secret && secret !== registry.secretOf(id)) writePrivateFileAtomically(join(registry.dir, id, 'secret'), secret);
    return record;
  } catch (error) {
    if (error instanceof RegistryError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * The secret in a file, so it never sits on argv (where /proc/<pid>/cmdline and `ps` show it
 * to every local user). The file must be the user's alone: a secret others can read is shared.
 */
export function readSecretFile(file: string): string {
  let mode: number;
  let text: string;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new CliError(`--secret-file ${file} is not a regular file`);
    mode = stat.mode & 0o777;
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`--secret-file ${file} cannot be read: ${(error as Error).message}`);
  }
  // Windows has no such mode bits (Node reports 0o666 for every writable file): its ACLs decide.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new CliError(`--secret-file ${file} is readable or writable by group or others (mode ${mode.toString(8).padStart(4, '0')}); run chmod 600 ${file}`);
  }
  const secret = text.trim();
  if (!secret) throw new CliError(`--secret-file ${file} is empty`);
  return secret;
}

export async function runPeer(flags: StartFlags, out: Out): Promise<void> {
  // Before the data dir is made or opened: a refused secret leaves nothing behind.
  if (flags.secret !== undefined && flags.secretFile !== undefined) throw new CliError('give --secret or --secret-file, not both');
  const withSecret = flags.secretFile !== undefined ? { ...flags, secret: readSecretFile(flags.secretFile) } : flags;
  let requestStop!: (signal: NodeJS.Signals) => void;
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => (requestStop = resolve));
  process.once('SIGINT', () => requestStop('SIGINT'));
  process.once('SIGTERM', () => requestStop('SIGTERM'));

  const dataDir = resolveDataDir(flags.dataDir);
  let env;
  try {
    env = settingsFromEnv();
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const registry = new PeerRegistry(dataDir);
  const record = peerFor(registry, withSecret, env);
  // What is about to happen, before it does: which peer, which port, which data dir, and
  // whether the peer stays registered after this process stops.
  out(
    `starting peer ${record.id} on ${record.port === 0 ? 'any free port' : `port ${record.port}`} for data dir ${dataDir}${record.ephemeral ? '; it leaves the registry when it stops (--keep keeps it)' : ''}`,
  );
  // An ephemeral peer leaves the registry once this process is done with it, started or not.
  const forget = () => {
    if (registry.get(record.id)?.ephemeral) registry.remove(record.id);
  };
  const logger = createLogger(join(registry.dir, record.id, 'peer.jsonl'));
  // An open pipe keeps the event loop alive: it is let go on a failed start and once the peer has stopped.
  const unwatch = flags.watchFd !== undefined ? watchParent(flags.watchFd, () => requestStop('SIGHUP')) : () => undefined;
  let peer;
  try {
    peer = await startPeer({ dataDir, record, settings: env, logger, ...(flags.portFile ? { portFile: flags.portFile } : {}), adminToken: process.env.AGENTPLANE_PEER_ADMIN_TOKEN ?? null });
  } catch (error) {
    unwatch();
    forget();
    if (error instanceof PeerStartError || error instanceof CustomSkillError) throw new CliError(error.message);
    throw error;
  }
  out(`MCPV2_BOUND_PORT=${peer.port}`);
  out(`MCPV2_PEER_ADDRESS=${peer.address}`);
  // A live token, for a person at a terminal trying things on this host. A supervised peer's
  // output goes to a log file, where no token belongs: the plane starts it with --no-demo-session.
  if (flags.demoSession !== false) out(`MCPV2_DEMO_SESSION_ADDRESS=${peer.demoAddress}`);
  out(`peer ${record.id} (${record.name}) is up; share MCPV2_PEER_ADDRESS.${flags.demoSession !== false ? ` The demo address's session is valid only for a caller whose source IP is ${record.publicIp}.` : ''}`);
  const signal = await stopRequested;
  logger.log('info', signal === 'SIGHUP' ? 'the plane that started this peer is gone, stopping' : `received ${signal}, stopping`);
  await peer.close();
  forget();
  unwatch();
}
