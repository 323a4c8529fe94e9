/**
 * The composition root. `createPlane` builds everything a plane is from its config and hands
 * back one object that the Electron main, the CLI and the web bridge all drive the same way.
 * No front end builds parts of a plane itself; if it needs something, it is added here.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { PlaneStatus } from '../../src-shared/ipc/contract';
import { appRoot } from '../base/app-paths';
import { dispatchCommand, type CallContext, type CommandHandlers } from './dispatch';
import { EventHub } from './event-hub';
import { errorFields, silentLogger, type Logger } from '../base/logger';
import type { Result } from '../../src-shared/ipc/result';
import { Journal, type InstanceLease } from '../journal/journal';
import { databaseOptions, DATABASE_URL_ENV, type DatabaseChoice } from '../journal/postgres-url';
import { journalHandlers } from './journal-handlers';
import { acpHandlers } from './acp-handlers';
import { caseHandlers } from './case-handlers';
import { erasureHandlers, startRetention } from './erasure-handlers';
import { TranscriptStore } from '../journal/transcript-store';
import { mcpEndpointHandlers } from './mcp-endpoint';
import { mcpClientHandlers } from './mcp-client-handlers';
import { a2aClientHandlers } from './a2a-client-handlers';
import { createA2aClient, type A2aClient } from '../protocols/a2a/client/a2a-client';
import { createMcpClientPool } from '../protocols/mcp/client/mcp-client-pool';
import { createNetguard, type Netguard } from '../net/netguard';
import { NetAllowStore, netAllowHandlers, planeAllowList, type DerivedAllowSources } from './net-allow';
import { Runtime } from '../runtime/runtime';
import { builtinTools, workspaceOf, type Tool } from '../runtime/tools';
import { FileLabels } from '../runtime/file-labels';
import type { LoadedAgent } from '../runtime/manifest';
import type { PolicyEngine } from '../runtime/policy';
import type { ModelProvider } from '../runtime/model-provider';
import { loadPolicy, loadProviders, loadSensitivity } from './plane-config';
import { AgentFiles, agentFilesHandlers } from './agent-files';
import { openProviderSettings, providerHandlers } from './provider-handlers';
import type { KeySealer } from './provider-settings';
import { LOCAL_USER, runtimeHandlers } from './runtime-handlers';
import { peerHandlers } from './peer-handlers';
import { readJournalChanges } from './journal-changes';
import { startJournalAnnouncer } from './journal-announcer';
import { startTakeover } from './takeover';
import { PeerSupervisor } from '../peers/peer-supervisor';
import { createPeerCaller } from '../peers/peer-caller';
import { ensurePrivateDataDir } from '../base/data-dir-guard';
import { acquirePlaneLock } from './plane-lock';
import { PlaneError } from '../base/plane-error';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { startupMark } from '../base/startup-trace';
import { openWitnessSubmitter, witnessStatusOf } from './witness-handlers';

/** How often a team plane's instance looks for instances to take over, ms (PlaneConfig.leaseCheckMs). */
export const DEFAULT_LEASE_CHECK_MS = 1000;

/** Observed editor sessions looked at for waiting permission requests (newest first). */
const OBSERVED_WAITS_LIMIT = 200;

/** The newest runs whose summaries a long-running plane folds once its start-up check ends: the UI's Runs list (RUN_LIST_LIMIT in the renderer). */
const WARM_RUN_SUMMARIES = 1000;

export interface PlaneConfig {
  dataDir: string;
  /**
   * The PostgreSQL journal this plane shares with other instances (`serve --database`,
   * AGENTPLANE_DATABASE_URL); absent: the data dir's SQLite file. The data dir keeps this
   * instance's own files (its key, checkpoints, tokens and addresses) either way.
   */
  database?: DatabaseChoice;
  /** Told (with who holds it) when this instance's own lease on a shared journal is held elsewhere and it waits. */
  onLeaseWaiting?: (holder: string) => void;
  /**
   * How often a team plane's instance looks for instances whose lease ended, to take their
   * runs over (takeover.ts; default DEFAULT_LEASE_CHECK_MS).
   */
  leaseCheckMs?: number;
  /**
   * Told when this instance loses its lease on the shared journal (the database dropped its session).
   * Default: the process exits at once (code 75), so no effect is performed after another
   * instance may have taken its runs over.
   */
  onLeaseLost?: (reason: string) => void;
  /** Aborts a start still waiting for the shared journal's lease. */
  signal?: AbortSignal;
  version: string;
  host: PlaneStatus['host'];
  logger?: Logger;
  /** The clock; tests pass a fixed one. */
  now?: () => number;
  /** Issue a signed journal checkpoint at least every this many records. */
  checkpointEvery?: number;
  /** The outside witness checkpoints are submitted to (docs/WITNESS.md); else AGENTPLANE_WITNESS_URL in `env`; else none. */
  witnessUrl?: string;
  /** How soon an unreachable witness is tried again (ms). */
  witnessRetryMs?: number;
  /** How often to look for records other processes appended to this data dir (ms). */
  journalPollMs?: number;
  /**
   * Overrides for tests and embedders; by default they are read from files and the environment.
   * Given agents are the plane's whole set: no agent file is read or watched.
   */
  agents?: LoadedAgent[];
  /**
   * Watch <data dir>/agents and read it again when a file is added, changed or removed (default
   * true; `agents.reload` reads it either way). Off for a test that reloads on its own word.
   */
  watchAgentFiles?: boolean;
  policy?: PolicyEngine;
  providers?: Map<string, ModelProvider>;
  tools?: ReadonlyMap<string, Tool>;
  /** Where AGENTPLANE_* provider variables are read (default process.env); tests pass their own. */
  env?: NodeJS.ProcessEnv;
  /**
   * Seals stored provider keys with the OS keychain (the desktop app's safeStorage, over the
   * plane host's channel); absent: keys are kept in the 0600 providers.json alone.
   */
  keySealer?: KeySealer;
  /**
   * On a data dir with no peers yet, register the two demo peers (alpha and beta, loopback,
   * a free port each start, beta in LLM mode; alpha may call beta's ping, ask and pay, beta
   * alpha's ping and ask).
   * They are registered, not started: starting is a click (or `agentplane peer up`).
   */
  demoPeers?: boolean;
  /**
   * How agents reach remote A2A agents. Absent: the plane's own client
   * (protocols/a2a/client/a2a-client.ts) through netguard's dispatcher, which judges every
   * address at connect; tests pass one whose dispatcher allows their loopback servers.
   * Closed with the plane, first: a run following a remote task must not hold the close open.
   */
  a2a?: A2aClient;
  /**
   * Answer before the start-up check of the journal has ended (RuntimeOptions'
   * checkJournalInBackground): for the long-running planes (`serve`, `mcp serve`, the desktop
   * app), so a long journal does not hold their first answer for the seconds its check takes.
   */
  checkJournalInBackground?: boolean;
  /**
   * The argv prefix that runs the `agentplane` command, with which the supervisor starts each
   * peer process (`<command> peer start …`). Default: this process's Node binary and this
   * install's bin/agentplane.js (agentplaneCommand).
   */
  peerCommand?: readonly string[];
}

/** This install's `agentplane` command: the running Node binary and bin/agentplane.js. */
export function agentplaneCommand(): string[] {
  return [process.execPath, join(appRoot(), 'bin', 'agentplane.js')];
}

export interface Plane {
  readonly dataDir: string;
  readonly events: EventHub;
  readonly logger: Logger;
  readonly journal: Journal;
  readonly runtime: Runtime;
  readonly peers: PeerSupervisor;
  /** The one outbound dispatcher (net/netguard.ts): the A2A push worker delivers through it. */
  readonly netguard: Netguard;
  status(): PlaneStatus;
  /** Runs one command exactly as every transport does. */
  dispatch(name: string, request: unknown, context: CallContext): Promise<Result<unknown>>;
  close(): Promise<void>;
}

export async function createPlane(config: PlaneConfig): Promise<Plane> {
  const now = config.now ?? Date.now;
  const logger = config.logger ?? silentLogger;
  const events = new EventHub();
  // One plane per data dir: the lock is taken before anything in the data dir is opened and
  // released after everything is closed. A live holder makes this throw PlaneRunningError.
  ensurePrivateDataDir(config.dataDir);
  const lock = acquirePlaneLock(config.dataDir);
  let journal: Journal;
  try {
    journal = await Journal.open({
      dataDir: config.dataDir,
      ...databaseOptions(config.database),
      now,
      checkpointEvery: config.checkpointEvery,
      // A first start after an upgrade can rebuild a large table: the log says so before it stalls.
      onMigrationNotice: (message) => logger.log('warn', message),
    });
  } catch (error) {
    lock.release();
    throw error;
  }
  let lease: InstanceLease | null = null;
  try {
    // On a shared database this instance holds a lease (journal-store.ts InstanceLease): its
    // runs are admitted under a host of its own, and its appends are fenced by the lease, so
    // once another instance may take its runs over nothing more of it reaches the journal.
    // It waits here only while its own lease is still held (another instance is taking the
    // runs it left over).
    lease = await journal.holdInstanceLease(
      { host: `plane@${journal.instanceId ?? ''}`, pid: process.pid, hostname: hostname(), dataDir: config.dataDir, since: new Date(now()).toISOString() },
      {
        onWaiting: (current) => {
          const who = current ? `process ${current.pid} on ${current.hostname} (data dir ${current.dataDir})` : 'another plane instance';
          logger.log('warn', `waiting: this instance's lease on ${journal.location} is held by ${who}; it starts once that ends`);
          config.onLeaseWaiting?.(who);
        },
        onLost: (reason) => {
          logger.log('error', `this instance lost its lease on the journal: ${reason}`);
          if (config.onLeaseLost) config.onLeaseLost(reason);
          // Another instance may take the runs over now: this one must not perform one more effect.
          else process.exit(75);
        },
        ...(config.signal ? { signal: config.signal } : {}),
      },
    );
    // What was appended while this instance waited is signed by its key before its runtime
    // reads the journal: its start-up check then covers every record.
    if ((await journal.head()).seq > journal.size) await journal.checkpoint();
  } catch (error) {
    await journal.close().catch(() => undefined);
    lock.release();
    throw error;
  }
  startupMark('plane.journal-open');
  const witness = openWitnessSubmitter(journal, config, logger);
  // Each peers.changed carries the whole list: the changes of one turn (fifty peers stopping
  // together) go out as one event holding the newest, not one each.
  let peersChangedQueued = false;
  const peersChanged = () => {
    if (peersChangedQueued) return;
    peersChangedQueued = true;
    setImmediate(() => {
      peersChangedQueued = false;
      events.publish('peers.changed', { peers: peers.list() });
    });
  };
  const peers = new PeerSupervisor(config.dataDir, logger, peersChanged, config.peerCommand ?? agentplaneCommand(), {
    // The plane's peers write to the plane's journal: the same database, or none (a variable
    // left in the environment must not send a peer of a SQLite plane elsewhere).
    [DATABASE_URL_ENV]: config.database?.url,
  });
  if (config.demoPeers && peers.registry.list().length === 0) {
    peers.registry.create({ id: 'alpha', name: 'Alpha (demo)', port: 0, publicIp: '127.0.0.1' });
    peers.registry.create({ id: 'beta', name: 'Beta (demo, LLM mode)', port: 0, publicIp: '127.0.0.1', llmMode: true });
    peers.registry.allow('beta', 'alpha', ['ping', 'ask', 'pay']);
    peers.registry.allow('alpha', 'beta', ['ping', 'ask']);
  }
  // Peers left alive by an earlier plane on this data dir are taken over, never doubled.
  await peers.adoptRunning();
  startupMark('plane.peers-adopted');
  // Provider settings (Settings, `agentplane providers`) under the environment; the Map is the
  // one the runtime holds, so a change is applied to it in place (provider-handlers.ts).
  const env = config.env ?? process.env;
  let providerSettings: Awaited<ReturnType<typeof openProviderSettings>>;
  let providers: Map<string, ModelProvider>;
  // The MCP servers the user declared, for agents' `mcp` steps; connected on first use.
  // netguard: the one dispatcher the plane's outbound HTTP clients share (providers, MCP over
  // HTTP, A2A, token issuers), judging every address at connect. Its allow list is read live: the person's
  // net-allow.json plus the provider base URLs and MCP server URLs they configured.
  const netAllow = new NetAllowStore(config.dataDir);
  if (netAllow.problem) logger.log('warn', 'the outbound allow list is not in force', { reason: netAllow.problem });
  const allowSources: DerivedAllowSources = { dataDir: config.dataDir, env, storedProviders: () => providerSettings?.settings ?? {} };
  const netguard = createNetguard({ allow: planeAllowList(netAllow, allowSources) });
  const mcpPool = createMcpClientPool(config.dataDir, logger, { clientVersion: config.version, dispatcher: netguard.dispatcher });
  // Remote A2A agents, for agents' `a2a` steps and tools: the card and the interface it names are
  // both reached through netguard (a card can name an address; only netguard decides if it is one).
  const a2aClient = config.a2a ?? createA2aClient({ dataDir: config.dataDir, dispatcher: netguard.dispatcher });
  let runtime: Runtime;
  // The person's agent files, unless the embedder gave the agents: a broken one is left out and
  // listed, never fatal; the folder is followed while the plane runs (agent-files.ts).
  let agentFiles: AgentFiles | null = null;
  try {
    providerSettings = await openProviderSettings(config.dataDir, config.keySealer ?? null, logger);
    providers = config.providers ?? loadProviders(env, { dataDir: config.dataDir, stored: providerSettings.settings, dispatcher: netguard.dispatcher });
    startupMark('plane.providers');
    const policy = config.policy ?? loadPolicy(config.dataDir);
    const sensitivity = loadSensitivity(config.dataDir);
    const tools = config.tools ?? builtinTools;
    agentFiles = config.agents ? null : new AgentFiles({ dataDir: config.dataDir, policy, tools, logger });
    const agents = agentFiles ? agentFiles.load() : { agents: config.agents ?? [], broken: [] };
    runtime = await Runtime.create({
      journal,
      agents: agents.agents,
      brokenAgents: agents.broken,
      policy,
      providers,
      sensitivity,
      tools,
      toolContext: { workspace: workspaceOf(config.dataDir), labels: new FileLabels(config.dataDir) },
      logger,
      peers: createPeerCaller({ registry: peers.registry, portOf: (id) => peers.portOf(id), netguard }),
      mcp: mcpPool,
      a2a: a2aClient,
      // A model's answer while it streams, to every connected client (never journaled: the
      // sealed effect is the record; the runtime coalesces to 20 updates a second per call).
      onModelText: (update) => events.publish('runs.streaming', update),
      ...(lease ? { host: lease.host } : {}),
      // The Runs list a long-running plane's UI opens first (its 1,000 newest runs), folded once the check has ended.
      ...(config.checkJournalInBackground ? { checkJournalInBackground: true, warmRunSummaries: WARM_RUN_SUMMARIES } : {}),
    });
  } catch (error) {
    await witness?.close();
    await journal.close();
    lock.release();
    throw error;
  }
  startupMark('plane.runtime');
  const startedAtMs = now();
  let state: PlaneStatus['state'] = 'running';
  let closing: Promise<void> | undefined;

  const status = (): PlaneStatus => ({
    version: config.version,
    dataDir: config.dataDir,
    journal: journal.location,
    startedAt: new Date(startedAtMs).toISOString(),
    uptimeMs: Math.max(0, Math.round(now() - startedAtMs)),
    host: config.host,
    ...(lease ? { instance: lease.host } : {}),
    state,
  });

  agentFiles?.attach(runtime, (view) => events.publish('agents.changed', view));
  if (config.watchAgentFiles ?? true) agentFiles?.watch();

  const runtimeCommands = runtimeHandlers(runtime);
  // Beside the journal, not in it: what people read of evidence-recorded ACP sessions (acp-handlers.ts).
  const transcripts = TranscriptStore.open(config.dataDir);
  const acp = acpHandlers(journal, LOCAL_USER, { store: transcripts, grew: (runId, lastWire) => events.publish('acp.transcript', { runId, lastWire }) });
  // Retention (docs/ERASURE.md): old unheld payloads erased in the background, journaled like an erase.
  const forgetFolded = () => runtime.forgetFoldedRuns();
  const stopRetention = startRetention(journal, config.dataDir, now, forgetFolded, (error) => logger.log('error', 'retention failed', errorFields(error)));
  const handlers: CommandHandlers = {
    'plane.status': () => status(),
    'witness.status': () => witnessStatusOf(witness),
    'journal.changes': ({ afterSeq }) => readJournalChanges(journal, afterSeq),
    ...journalHandlers(journal),
    ...runtimeCommands,
    ...agentFilesHandlers(agentFiles),
    ...peerHandlers(peers),
    ...acp.handlers,
    ...caseHandlers(journal, LOCAL_USER),
    ...erasureHandlers(journal, LOCAL_USER, now, forgetFolded),
    ...mcpEndpointHandlers(config.dataDir, runtime),
    ...mcpClientHandlers(mcpPool),
    ...a2aClientHandlers(config.dataDir, {
      listRuns: (limit) => runtime.listRunsWithEffect(limit, 'a2a'),
      timeOf: async (seq) => (await journal.readRange(seq, seq, 1))[0]?.time,
    }),
    ...providerHandlers({ state: providerSettings, providers, env, dataDir: config.dataDir, logger, dispatcher: netguard.dispatcher }),
    ...netAllowHandlers(netAllow, allowSources),
    // An editor session's permission request (under --policy inbox) waits in the same inbox as
    // the runtime's waits, is read as a run like them, and is decided through the same command.
    async 'approvals.list'(request, context) {
      const own = await runtimeCommands['approvals.list'](request, context);
      const observed = await acp.inbox.waiting(OBSERVED_WAITS_LIMIT);
      return { waiting: [...own.waiting, ...observed].sort((a, b) => (a.pending?.seq ?? 0) - (b.pending?.seq ?? 0)) };
    },
    async 'runs.list'(request, context) {
      const own = await runtimeCommands['runs.list'](request, context);
      // Waiting runs are listed wherever they wait, so a list read at startup counts these too.
      if (request.agent !== undefined || request.owner !== undefined || (request.status !== undefined && request.status !== 'suspended')) return own;
      return { runs: [...own.runs, ...(await acp.inbox.waiting(OBSERVED_WAITS_LIMIT))] };
    },
    async 'approvals.decide'(request, context) {
      if (request.waitId.endsWith('/permission')) {
        // An editor's permission request is a person's to answer, never a protocol caller's.
        if (context.caller) throw new PlaneError(ErrorCode.Forbidden, "only a person at this plane can answer an editor's permission request");
        return acp.inbox.decide(request);
      }
      return runtimeCommands['approvals.decide'](request, context);
    },
    async 'runs.get'(request, context) {
      try {
        return await runtimeCommands['runs.get'](request, context);
      } catch (error) {
        // Not a run the runtime admitted: an observed editor session, or nothing (NotFound either way).
        if (error instanceof PlaneError && error.code === ErrorCode.NotFound) return acp.inbox.runView(request.runId);
        throw error;
      }
    },
  };

  // The stream is a view of the journal: one `journal.appended` per commit names the runs it
  // touched, by journal seq. Our own commits announce themselves at once; appends by other
  // processes sharing the data dir (a peer started from the CLI) are found by a cheap poll.
  const announcer = await startJournalAnnouncer(journal, (payload) => events.publish('journal.appended', payload), config.journalPollMs ?? 500);
  // On a team plane, the runs of an instance whose lease ended are taken over here (takeover.ts).
  const takeover = lease
    ? startTakeover({
        lease,
        runtime,
        logger,
        everyMs: config.leaseCheckMs ?? DEFAULT_LEASE_CHECK_MS,
        onTaken: (from, runs) => logger.log('warn', `took over ${runs.length} run(s) of ${from}`, { from, runs: runs.length }),
      })
    : null;

  startupMark('plane.ready');
  events.publish('plane.statusChanged', status());
  logger.log('info', 'plane started', { dataDir: config.dataDir, host: config.host, version: config.version });

  return {
    dataDir: config.dataDir,
    events,
    logger,
    journal,
    runtime,
    peers,
    netguard,
    status,
    dispatch: (name, request, context) =>
      dispatchCommand(handlers, name, request, context, (command, error) =>
        logger.log('error', `command ${command} failed`, errorFields(error)),
      ),
    close() {
      closing ??= (async () => {
        state = 'stopping';
        events.publish('plane.statusChanged', status());
        agentFiles?.close();
        await takeover?.stop();
        await peers.stopAll();
        // A follow in flight is parked (nothing is written): its effect is resumable, so the next
        // plane re-attaches to the remote task by its id (runtime/a2a-effect.ts).
        a2aClient.close();
        await runtime.close();
        await mcpPool.close();
        // After every client that sends through it: its idle sockets go with it.
        await netguard.close();
        announcer.stop();
        stopRetention();
        transcripts.close();
        // Before the journal closes: the shutdown checkpoint reaches the witness at the next start.
        await witness?.close();
        // The shutdown checkpoint: everything written is signed before the process goes.
        await journal.close();
        lock.release();
        logger.log('info', 'plane stopped');
      })();
      return closing;
    },
  };
}
