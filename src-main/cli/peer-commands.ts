/**
 * `agentplane peer …`. `peer start` runs one MCPv2 peer in the foreground with the seed's
 * flags and environment variables (MCPV2_PORT, MCPV2_SECRET, MCPV2_LLM_MODE, …), journaling into
 * the data dir; it prints the seed's lines (MCPV2_BOUND_PORT, MCPV2_PEER_ADDRESS,
 * MCPV2_DEMO_SESSION_ADDRESS). The other subcommands act on the plane's peers through the running
 * plane (or the data dir), exactly as the UI does; up, stop, restart, sessions and
 * revoke-session act only through a running plane, since a peer lives only as long as the plane
 * that started it.
 */
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { PeerRegistry, RegistryError, type PeerRecord } from '../peers/peer-registry';
import { PeerStartError, settingsFromEnv, startPeer } from '../plane/peer-host';
import { watchParent } from '../peers/parent-watchdog';
import { CustomSkillError } from '../peers/custom-skills';
import { CliError } from './cli-error';
import { runAndPrint, type OutputOptions, type PlaneConnection } from './plane-connection';
import type { PeerSummary } from '../../src-shared/ipc/contract';
import { PeerAuthModeSchema, type PeerAuthMode } from '../../src-shared/vocabulary/peers';
import { readFileSync, statSync } from 'node:fs';
import { writePrivateFileAtomically } from '../base/private-files';
import { randomBytes } from 'node:crypto';

type Out = (line: string) => void;

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
  return Number(value);
}

interface StartFlags {
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

async function runPeer(flags: StartFlags, out: Out): Promise<void> {
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

function describePeer(peer: PeerSummary): string {
  return `${peer.id.padEnd(14)} ${peer.status.padEnd(9)} ${(peer.address ?? `port ${peer.port}`).padEnd(36)} ${peer.llmMode ? 'llm-mode ' : ''}auth:${peer.auth}${peer.revoked ? ' REVOKED' : ''}${peer.error ? `  (${peer.error})` : ''}`;
}

export function addPeerCommands(program: Command, out: Out = (l) => process.stdout.write(`${l}\n`)): void {
  const peer = program.command('peer').description('MCPv2 peers: run one, or manage the plane\'s');

  peer
    .command('start')
    .description('run one MCPv2 peer in this terminal until Ctrl-C (flags and $MCPV2_* variables as in mcpv2.py)')
    .option('--peer-id <id>', 'a peer of the plane\'s registry (created if missing)')
    .option('--name <name>', 'display name (also the id when --peer-id is absent)')
    .option('--port <port>', 'TCP port (default $MCPV2_PORT or 8000); strict unless --port-fallback', parsePort)
    .option('--secret-file <file>', 'read the shared HMAC secret from this file (mode 0600; default $MCPV2_SECRET, else the peer\'s stored or a generated one)')
    .option('--secret <secret>', 'the secret itself: visible to other local users in the process list; prefer --secret-file or $MCPV2_SECRET')
    .option('--public-ip <ip>', 'the address to advertise and bind (default 127.0.0.1)')
    .option('--bind-host <host>', 'bind this address instead, e.g. 0.0.0.0, while advertising --public-ip')
    .option('--port-fallback', 'scan forward when the port is busy')
    .option('--port-file <file>', 'write the bound port here')
    .option('--llm-mode', 'stateful ask: conversations carry context turn over turn ($MCPV2_LLM_MODE=1)')
    .option('--auth <mode>', 'shared-secret | identity | both (default both)')
    .option('--custom-skills <file>', 'a JSON file of custom skills')
    .option('--data-dir <dir>', 'data folder')
    .option('--no-demo-session', 'do not print MCPV2_DEMO_SESSION_ADDRESS (a live token)')
    .option('--keep', 'keep a peer made by this start in the registry after it stops (by default it is removed)')
    .addOption(new Option('--watch-fd <fd>', 'stop when this inherited pipe closes (the plane passes it)').argParser((v) => Number(v)).hideHelp())
    .action(async (flags: StartFlags) => {
      if (flags.auth && !PeerAuthModeSchema.safeParse(flags.auth).success) throw new CliError(`--auth is one of ${PeerAuthModeSchema.options.join(', ')}`);
      await runPeer(flags, out);
    });

  const common = (command: Command) => command.option('--data-dir <dir>', 'data folder').option('--json', 'print JSON for scripts');
  const act = <T>(options: OutputOptions, work: (plane: PlaneConnection) => Promise<T>, print: (value: T) => void) => runAndPrint(options, out, work, print);
  // A peer started, restarted or asked about by a plane this command opened would live only as
  // long as the command: these act only through a running plane, and refuse without one.
  const live = <T>(options: OutputOptions, work: (plane: PlaneConnection) => Promise<T>, print: (value: T) => void) =>
    runAndPrint(options, out, work, print, { needsRunningPlane: true });

  common(peer.command('list').description("the plane's peers")).action((o: { dataDir?: string; json?: boolean }) =>
    act(o, (p) => p.call('peers.list', {}), ({ peers }) => (peers.length === 0 ? out('no peers') : peers.forEach((x) => out(describePeer(x))))),
  );
  common(
    peer
      .command('create')
      .description('add a peer to the plane (start it with `peer up`)')
      .argument('<id>', 'the new peer\'s id')
      .option('--port <port>', 'TCP port; 0 picks a free one at each start', parsePort, 0)
      .option('--public-ip <ip>', 'address to advertise and bind', '127.0.0.1')
      .option('--llm-mode', 'stateful ask')
      .option('--auth <mode>', 'shared-secret | identity | both', 'both'),
  ).action((id: string, o: { dataDir?: string; json?: boolean; port: number; publicIp: string; llmMode?: boolean; auth: PeerAuthMode }) =>
    act(o, (p) => p.call('peers.create', { id, port: o.port, publicIp: o.publicIp, llmMode: o.llmMode ?? false, auth: o.auth }), (x) => out(describePeer(x))),
  );
  for (const verb of ['start', 'stop', 'restart'] as const) {
    common(peer.command(verb === 'start' ? 'up' : verb).argument('<id>').description(`${verb} one of the plane's peers`)).action((id: string, o: { dataDir?: string; json?: boolean }) =>
      live(o, (p) => p.call(`peers.${verb}`, { id }), (x) => out(describePeer(x))),
    );
  }
  common(peer.command('sessions').argument('<id>').description("a running peer's live sessions")).action((id: string, o: { dataDir?: string; json?: boolean }) =>
    live(o, (p) => p.call('peers.sessions', { id }), ({ sessions }) => {
      if (sessions.length === 0) out('no live sessions');
      for (const s of sessions) out(`${s.label}  ${s.clientIp.padEnd(16)} issued ${new Date(s.issuedAt).toISOString()}  expires ${new Date(s.expiresAt).toISOString()}`);
    }),
  );
  common(peer.command('revoke-session').argument('<id>', 'peer id').argument('<label>', 'the session, as `peer sessions` lists it').description("end one of a running peer's live sessions")).action((id: string, label: string, o: { dataDir?: string; json?: boolean }) =>
    live(o, (p) => p.call('peers.revokeSession', { id, label }), ({ revoked }) => out(revoked ? `revoked ${label}` : `${label} was not live`)),
  );
  common(peer.command('allow').description('let one peer call skills of another').argument('<callee>', 'the peer being called').argument('<caller>', 'the peer allowed to call it').requiredOption('--skills <list>', 'comma-separated skill names')).action(
    (callee: string, caller: string, o: { dataDir?: string; json?: boolean; skills: string }) =>
      act(o, (p) => p.call('peers.allow', { callee, caller, skills: o.skills.split(',').map((s) => s.trim()).filter(Boolean) }), (x) => out(describePeer(x))),
  );
  common(peer.command('revoke').argument('<id>').description("revoke a peer's identity")).action((id: string, o: { dataDir?: string; json?: boolean }) =>
    act(o, (p) => p.call('peers.revoke', { id }), (x) => out(describePeer(x))),
  );
}
