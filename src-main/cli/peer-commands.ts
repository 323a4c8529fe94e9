/**
 * `agentplane peer …`. `peer start` runs one MCPv2 peer in the foreground with the MCPv2 protocol's
 * flags (docs/PEER-PROTOCOL.md) and environment variables (MCPV2_PORT, MCPV2_SECRET,
 * MCPV2_LLM_MODE, …), journaling into the data dir; it prints the protocol's lines
 * (MCPV2_BOUND_PORT, MCPV2_PEER_ADDRESS, MCPV2_DEMO_SESSION_ADDRESS). The other subcommands act on
 * the plane's peers through the running plane (or the data dir), exactly as the UI does; up, stop,
 * restart, sessions and revoke-session act only through a running plane, since a peer lives only as
 * long as the plane that started it. What `peer start` runs is in peer-run.ts, loaded only by that
 * command.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliError } from './cli-error';
import type { OutputOptions, PlaneConnection } from './plane-connection';
import type { PeerSummary } from '../../src-shared/ipc/contract';
import { PeerAuthModeSchema, type PeerAuthMode, type TokenIssuerTrust } from '../../src-shared/vocabulary/peers';
import type { StartFlags } from './peer-run';

type Out = (line: string) => void;

/** What `peer start --secret` prints on stderr before anything else: the exposure and the two ways around it. */
export const SECRET_ON_ARGV_WARNING =
  'agentplane: warning: --secret puts the secret on the command line, where every local user can read it in the process list (ps, /proc/<pid>/cmdline) while this peer runs. ' +
  'Pass it with --secret-file <file> (mode 0600) or in $MCPV2_SECRET instead; on a machine others use, treat this one as exposed.';

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
  return Number(value);
}

interface TrustIssuerFlags {
  dataDir?: string;
  json?: boolean;
  name?: string;
  issuer?: string;
  actor?: string;
  jwksUrl?: string;
  publicKeyFile?: string;
  resource?: string;
  clear?: boolean;
}

/** `peer trust-issuer`'s flags as the contract's `trust` (checked there; here only what is missing). */
function trustFrom(o: TrustIssuerFlags): TokenIssuerTrust | null {
  if (o.clear) return null;
  const missing = (['name', 'issuer', 'actor'] as const).filter((flag) => !o[flag]);
  if (missing.length > 0) throw new CliError(`give ${missing.map((m) => `--${m}`).join(', ')} (or --clear)`);
  if (Boolean(o.jwksUrl) === Boolean(o.publicKeyFile)) throw new CliError('give exactly one of --jwks-url and --public-key-file');
  let publicKey: TokenIssuerTrust['publicKey'];
  if (o.publicKeyFile) {
    try {
      const { kty, crv, x, y } = JSON.parse(readFileSync(o.publicKeyFile, 'utf8')) as Record<string, unknown>;
      // Only the key's public members: the contract refuses anything else (a private `d` included).
      publicKey = { kty, crv, x, ...(y === undefined ? {} : { y }) } as TokenIssuerTrust['publicKey'];
    } catch (error) {
      throw new CliError(`--public-key-file ${o.publicKeyFile}: not a readable JWK (${(error as Error).message})`);
    }
  }
  return { name: o.name!, issuer: o.issuer!, actor: o.actor!, ...(o.jwksUrl ? { jwksUrl: o.jwksUrl } : { publicKey }), ...(o.resource ? { resource: o.resource } : {}) };
}

function describePeer(peer: PeerSummary): string {
  // A peer created with port 0 takes any free port at each start: while stopped it has none yet.
  const where = peer.address ?? (peer.port === 0 ? 'port any' : `port ${peer.port}`);
  return `${peer.id.padEnd(14)} ${peer.status.padEnd(9)} ${where.padEnd(36)} ${peer.llmMode ? 'llm-mode ' : ''}auth:${peer.auth}${peer.revoked ? ' REVOKED' : ''}${peer.error ? `  (${peer.error})` : ''}`;
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
      // The help says it, but the help is not read at run time: a secret on argv is in
      // /proc/<pid>/cmdline, which `ps` shows every local user for as long as the peer runs. Said
      // on stderr (stdout carries the MCPV2_* lines scripts parse), and never the secret itself.
      if (flags.secret !== undefined) process.stderr.write(`${SECRET_ON_ARGV_WARNING}\n`);
      if (flags.auth && !PeerAuthModeSchema.safeParse(flags.auth).success) throw new CliError(`--auth is one of ${PeerAuthModeSchema.options.join(', ')}`);
      // The peer itself (its server, journal and skills) is loaded only when one is started
      // here, not for every other peer subcommand, which acts through the plane (program.ts).
      await (await import('./peer-run')).runPeer(flags, out);
    });

  const common = (command: Command) => command.option('--data-dir <dir>', 'data folder').option('--json', 'print JSON for scripts');
  // The plane's client (its contract's schemas, HTTP and WebSocket transport) is loaded only by
  // the subcommands that talk to a plane: a peer process (`peer start`) never does, and each of
  // fifty peers would otherwise hold it idle (docs/PERFORMANCE.md, "Fifty peers").
  const act = async <T>(options: OutputOptions, work: (plane: PlaneConnection) => Promise<T>, print: (value: T) => void) =>
    (await import('./plane-connection')).runAndPrint(options, out, work, print);
  // A peer started, restarted or asked about by a plane this command opened would live only as
  // long as the command: these act only through a running plane, and refuse without one.
  const live = <T>(options: OutputOptions, work: (plane: PlaneConnection) => Promise<T>, print: (value: T) => void) =>
    import('./plane-connection').then(({ runAndPrint }) => runAndPrint(options, out, work, print, { needsRunningPlane: true }));

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
  // Several ids at once: all checked first, then started (or stopped) side by side, each
  // reported as it settles (peer-batch.ts). `down` is `stop`, for symmetry with `up`.
  for (const verb of ['start', 'stop', 'restart'] as const) {
    const command = peer.command(verb === 'start' ? 'up' : verb).argument('<id...>', 'one or more peer ids');
    if (verb === 'stop') command.alias('down');
    common(command.description(`${verb} the plane's peers named, together; each is reported as it ${verb === 'stop' ? 'stops' : 'becomes healthy'} or fails`)).action(
      async (ids: string[], o: { dataDir?: string; json?: boolean }) => (await import('./peer-batch')).actOnPeers(verb, ids, o, out, describePeer),
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
  common(
    peer
      .command('trust-issuer')
      .description("accept only a token issuer's delegated access tokens at this peer (docs/SECURITY.md), or --clear")
      .argument('<id>', 'the peer')
      .option('--name <name>', "the issuer's entry in <data dir>/token-issuers.json")
      .option('--issuer <iss>', 'the `iss` its tokens carry')
      .option('--actor <id>', "the plane's client id at the issuer (the tokens' act.sub)")
      .option('--jwks-url <url>', "the issuer's JWKS")
      .option('--public-key-file <file>', "the issuer's public key as a JWK file (Ed25519 or P-256), instead of a JWKS")
      .option('--resource <url>', 'RFC 8707 resource: the peer URL the issuer knows')
      .option('--clear', 'accept what the auth mode says again'),
  ).action((id: string, o: TrustIssuerFlags) => act(o, (p) => p.call('peers.trustIssuer', { id, trust: trustFrom(o) }), (x) => out(`${describePeer(x)}${o.clear ? '' : `; accepts only tokens from issuer ${o.name}`}`)));
  common(peer.command('revoke').argument('<id>').description("revoke a peer's identity")).action((id: string, o: { dataDir?: string; json?: boolean }) =>
    act(o, (p) => p.call('peers.revoke', { id }), (x) => out(describePeer(x))),
  );
}
