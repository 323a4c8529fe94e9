/**
 * MCP on a peer's own port: its skills served to MCP hosts as tools, at
 * `http://127.0.0.1:<peer port>/mcp`, by the same code that serves the plane's agents
 * (protocols/mcp/mcp-http.ts for the wire and who may use it, plane-surface.ts for the tools).
 * Only the door differs: the plane's surface reaches the plane through `plane.dispatch`; here it
 * reaches this peer's runtime through `peerDoor`, which answers the same commands (`agents.list`,
 * `runs.start`, `runs.get`, `runs.list`, `runs.cancel`, `journal.records`, `approvals.decide`)
 * through the plane's one dispatcher (plane/dispatch.ts: the contract's schemas, its error
 * mapping) with handlers over the peer's runtime. So a skill call over MCP is a skill run like
 * any other: admitted in this peer's runtime (host `peer:<id>`), journaled, metered, replayed.
 *
 * Who may call: a holder of the data dir's MCP token (the plane's, `mcp-address.json`, created by
 * whichever of the plane and its peers starts first: loadOrCreateMcpToken; read when the peer
 * starts, as the plane reads it when its endpoint starts), as principal `mcp:local`, from a
 * loopback address. The peer's own MCPv2 routes are untouched: the MCP hooks live in an
 * encapsulated plugin that holds only `/mcp`. What still applies to `/mcp` is the peer app's
 * root hooks, which run first for every route: a Host that is not this peer's own address and
 * port is 403, and so is ANY Origin (a peer is not a browser API), which is stricter than the
 * plane's endpoint (there a loopback Origin passes): a browser page cannot call a peer's skills
 * with the plane's token.
 *
 * The MCPv2 server's admission rules (peer-server.ts, dispatchSlot and runSkill), one by one, as
 * they apply to an MCP caller holding the plane's token:
 * - Policy: applies. Every call is `runtime.start` with chain `[mcp:local]`, so the peer's policy
 *   (the plane's policy.json plus the registry, PeerPolicy) is asked about `mcp:local` and a
 *   refusal is journaled (AdmissionRefused). The bundled policy.json allows `mcp:local` to call
 *   skills (`mcpv2:skill.call` on `skill:*`), as it allows it to start agents: the token's holder
 *   is the person at this machine through their MCP host; an operator narrows it with a deny rule.
 * - PeerPolicy's allowlists: do not apply. They say which skills another PEER may call (a
 *   `peer:<id>` caller presenting an identity credential); an MCP host holding the plane's token
 *   is not a peer, and holds the same trust as the shared-secret sessions (below).
 * - Rate limits: apply, the same budgets in the same order: the caller's own (keyed by its
 *   principal, `mcp:local`, one bucket for every MCP host) then its address's, which it shares
 *   with every MCPv2 session from that address (one local caller cannot starve the others by
 *   changing doors). Every HTTP request pays, as every MCPv2 request (and batch slot) does.
 * - Input bounds: apply, checked by the very door an MCPv2 call is admitted through
 *   (peers/skill-admission.ts), so both refuse alike. Nesting deeper than 64 levels is refused
 *   (-32602) before the SDK's recursive validation walks the body; a skill's arguments over 1 MB
 *   are refused before admission (a refused call journals nothing); arguments over 64 KiB go to
 *   the peer's blobs and are named in the journal by digest; an upload's bytes are staged, never
 *   journaled, and a content that is not the base64 it claims is refused. The body
 *   cap is the MCP route's (4 MiB, mcp-json.ts), not MCPv2's 24 MiB: an upload near the file
 *   store's 16 MiB goes through MCPv2.
 * - Arguments: checked against the skill's own argument schema (the very validator its run
 *   parses with) BEFORE admission, so a bad argument is -32602 naming the field and costs the
 *   journal nothing. (Over MCPv2 the run is admitted and fails with -32602 inside; MCP wants the
 *   protocol's error, and the surface maps the door's "input.<field>: ..." to it.)
 * - Conversations (LLM mode): the default conversation of an MCP caller is its principal's:
 *   holders of the one token are one trust domain, like the shared-secret holders sharing a
 *   named conversation.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { skillArguments, type BuiltinSkill, type SkillDescriptor } from '../../src-shared/protocol/mcpv2';
import type { Result } from '../../src-shared/ipc/result';
import type { z } from 'zod';
import { errorFields, type Logger } from '../base/logger';
import { PlaneError } from '../base/plane-error';
import type { Journal } from '../journal/journal';
import type { Runtime } from '../runtime/runtime';
import type { CustomSkill } from '../peers/custom-skills';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../peers/input-bounds';
import type { RateLimiter } from '../peers/rate-limiter';
import { canonicalIp } from '../peers/session-token';
import { BUILTIN_SKILLS } from '../peers/skills';
import type { SkillAdmission } from '../peers/skill-admission';
import { PRINCIPAL_ANONYMOUS } from '../protocols/mcp/mcp-factory';
import { registerMcpRoute, type McpRoute } from '../protocols/mcp/mcp-http';
import { firstRequestId, jsonRpcErrorBody, MCP_SERVER_ERROR } from '../protocols/mcp/mcp-json';
import type { McpPlaneDoor } from '../protocols/mcp/plane-door';
import { createPlaneSurface } from '../protocols/mcp/plane-surface';
import { dispatchCommand, type CallContext, type CommandHandlers } from './dispatch';
import { runChangesOf } from './journal-changes';
import { journalHandlers } from './journal-handlers';
import { approveWithOf, loadOrCreateMcpToken } from './mcp-endpoint';
import { runtimeHandlers } from './runtime-handlers';

const JSONRPC_INVALID_PARAMS = -32602;
const JSONRPC_RATE_LIMITED = -32005;

export interface PeerDoorDeps {
  peerId: string;
  runtime: Runtime;
  journal: Journal;
  /** The skills this peer serves (the same list MCPv2's tools/list answers). */
  skills: () => SkillDescriptor[];
  custom: readonly CustomSkill[];
  /** The peer's one door into its runtime, the one its MCPv2 routes admit through (peers/skill-admission.ts). */
  admission: SkillAdmission;
  dataDir: string;
  logger: Logger;
  /** The protocol this door serves, recorded as the runs' trigger: `mcp` (default) or `a2a`. */
  via?: NonNullable<CallContext['caller']>['via'];
}

type DoorCommand = 'agents.list' | 'runs.start' | 'runs.get' | 'runs.list' | 'runs.cancel' | 'journal.records' | 'approvals.decide';
type DoorHandlers = { [K in DoorCommand]: CommandHandlers[K] };

const isBuiltin = (name: string): name is BuiltinSkill => (BUILTIN_SKILLS as readonly string[]).includes(name);

/** A zod refusal of a skill's arguments as the runtime words an agent's ("input.<field>: ..."), which the surface maps to -32602. */
function problemsOf(error: z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `input.${key}: is not an argument of this tool`);
    const path = issue.path.map(String).join('.');
    return [`input${path ? `.${path}` : ''}: ${issue.message}`];
  });
}

/**
 * The arguments as the skill's run will receive them, or a BadRequest naming the field. Checked
 * with the skill's own validator (the zod schema its run parses, or the custom skill's compiled
 * JSON Schema), so this check and the run cannot disagree.
 */
function checkedArguments(skill: string, args: Record<string, unknown>, custom: readonly CustomSkill[]): Record<string, unknown> {
  const refuse = (problems: string[]) => new PlaneError(ErrorCode.BadRequest, `input for skill:${skill} does not match its schema: ${problems.join('; ')}`);
  if (isBuiltin(skill)) {
    const parsed = (skillArguments[skill] as z.ZodType).safeParse(args);
    if (!parsed.success) throw refuse(problemsOf(parsed.error));
    return args;
  }
  const found = custom.find((c) => c.name === skill);
  if (!found) throw new PlaneError(ErrorCode.NotFound, `no skill named ${skill}`);
  const problems = found.validateArguments(args);
  if (problems.length > 0) throw refuse(problems.map((p) => p.replace(/^arguments/, 'input')));
  return args;
}

function grantsOf(grants: ReadonlyMap<string, { approve: boolean }>): Array<{ kind: string; name: string; approve: boolean }> {
  return [...grants].map(([grant, { approve }]) => {
    const at = grant.indexOf(':');
    return { kind: grant.slice(0, at), name: grant.slice(at + 1), approve };
  });
}

/**
 * This peer's runtime as the MCP surface's door. Commands are parsed and their failures mapped
 * by the plane's own dispatcher; the handlers reach only runs this peer hosts (another host's
 * run, the plane's or another peer's, reads as no such run: this door is the peer's, not the
 * plane's), and the surface's own rule still holds on top: a caller reads only runs it admitted.
 */
export function peerDoor(deps: PeerDoorDeps): McpPlaneDoor {
  const { runtime, journal, peerId } = deps;
  // The runtime host this peer's runs are admitted under (`peer:<id>`, on a team plane `peer:<id>@<instance>`).
  const host = runtime.host;
  const runs = runtimeHandlers(runtime);
  const records = journalHandlers(journal)['journal.records'];

  async function hostedHere(runId: string): Promise<void> {
    const history = await runtime.summary(runId);
    if ((history.host ?? 'plane') !== host) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
  }

  const handlers: DoorHandlers = {
    'agents.list': () => {
      const programs = new Map(runtime.listPrograms().map((p) => [p.id, p]));
      return {
        agents: deps.skills().flatMap((skill) => {
          const program = programs.get(`skill:${skill.name}`);
          return program ? [{ name: skill.name, description: skill.description, inputSchema: skill.inputSchema, grants: grantsOf(program.grants), budget: program.budget, source: host }] : [];
        }),
        // A peer's skills are not files: none is ever broken.
        broken: [],
      };
    },
    async 'runs.start'({ agent: skill, input, context: runContext }, context) {
      const principal = context.caller?.principal ?? PRINCIPAL_ANONYMOUS;
      if (!deps.skills().some((s) => s.name === skill)) throw new PlaneError(ErrorCode.NotFound, `no skill named ${skill}`);
      if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new PlaneError(ErrorCode.BadRequest, `input for skill:${skill} does not match its schema: input: must be an object`);
      // Admitted through the peer's one door, as an MCPv2 call is: depth and size refused there
      // first, then this surface's schema check (before admission: see the module comment),
      // then uploads staged, large arguments kept out of the journal, an unjournalable value refused.
      const { runId } = await deps.admission.start({
        skill,
        arguments: input as Record<string, unknown>,
        check: (args) => checkedArguments(skill, args, deps.custom),
        skillContext: { conversation: principal },
        principal,
        via: deps.via ?? 'mcp',
        ...(runContext !== undefined ? { runContext } : {}),
      });
      return runs['runs.get']({ runId }, context);
    },
    async 'runs.get'(request, context) {
      const view = await runs['runs.get'](request, context);
      if (view.host !== host) throw new PlaneError(ErrorCode.NotFound, `no run ${request.runId}`);
      return view;
    },
    async 'runs.list'(request, context) {
      // This door names its agents by skill (agents.list above); the runtime's are `skill:<name>`.
      const agent = request.agent === undefined || request.agent.startsWith('skill:') ? request.agent : `skill:${request.agent}`;
      const listed = await runs['runs.list']({ ...request, ...(agent !== undefined ? { agent } : {}), host }, context);
      return { ...listed, runs: listed.runs.filter((run) => run.host === host) };
    },
    async 'runs.cancel'({ runId, reason }, context) {
      // The caller's own runs only, cancelled in its name (the plane's handler cancels as the
      // person at the plane, which an MCP host is not).
      const principal = context.caller?.principal ?? PRINCIPAL_ANONYMOUS;
      const history = await runtime.summary(runId);
      if ((history.host ?? 'plane') !== host || history.owner !== principal) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
      await runtime.cancel(runId, principal, reason);
      return runs['runs.get']({ runId }, context);
    },
    async 'journal.records'(request, context) {
      if (request.runId === null) throw new PlaneError(ErrorCode.BadRequest, "journal.records: runId: this peer's MCP door reads one run's records at a time");
      await hostedHere(request.runId);
      return records(request, context);
    },
    async 'approvals.decide'(request, context) {
      // The plane's handler holds the rule: a protocol caller answers only its own run's input wait.
      await hostedHere(request.runId);
      return runs['approvals.decide'](request, context);
    },
  };

  const logFault = (command: string, error: unknown) => deps.logger.log('error', `peer ${peerId}: mcp door ${command} failed`, errorFields(error));
  const approveWith = approveWithOf(null, deps.dataDir);

  return {
    dispatch(name, request, { principal }): Promise<Result<unknown>> {
      if (!Object.hasOwn(handlers, name)) return Promise.resolve({ ok: false, error: { code: ErrorCode.UnknownCommand, message: `${name.slice(0, 80)} is not served by a peer's MCP door` } });
      const context: CallContext = { transport: 'local', caller: { principal, via: deps.via ?? 'mcp' } };
      // Only this door's commands reach the dispatcher (checked above), so the handlers it finds are all here.
      return dispatchCommand(handlers as unknown as CommandHandlers, name, request, context, logFault);
    },
    onJournal(listener) {
      // This process's own commits: the runs it hosts append here. (A decision made at the plane
      // reaches the run through the runtime's follower, which then appends here; the surface
      // re-reads its run every second anyway.)
      return journal.onAppend((appended) => {
        const runs = runChangesOf(appended);
        if (runs.length > 0) listener(runs);
      });
    },
    approveWith,
  };
}

export interface PeerMcpOptions extends PeerDoorDeps {
  version: string;
  /** The peer's MCPv2 budgets, the same instances its routes spend from (see the module comment). */
  requestLimiter: RateLimiter;
  addressLimiter: RateLimiter;
  /** How long a tools/call waits for its run (ms); tests shorten it. */
  settleMs?: number;
}

function isLoopback(ip: string): boolean {
  return ip === '::1' || /^127\./.test(ip);
}

function refuse(reply: FastifyReply, status: number, code: number, message: string, id: string | number | null = null): FastifyReply {
  return reply.code(status).header('content-type', 'application/json').send(jsonRpcErrorBody(code, message, id));
}

/** Mounts `/mcp` on the peer's app (before it listens); answers the route, to close with the peer. */
export async function mountPeerMcp(app: FastifyInstance, options: PeerMcpOptions): Promise<McpRoute> {
  const token = loadOrCreateMcpToken(options.dataDir);
  const factory = createPlaneSurface(peerDoor(options), { version: options.version, logger: options.logger, ...(options.settleMs ? { settleMs: options.settleMs } : {}) });
  let route: McpRoute | undefined;
  await app.register(async (scope) => {
    // The plane's token never leaves this machine: a peer may bind every interface (or a public
    // address) for its MCPv2 callers, but its /mcp answers loopback callers only, whatever Host
    // they claim (a Host header is the caller's to write).
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const ip = canonicalIp(request.ip) ?? request.ip;
      if (!isLoopback(ip)) return refuse(reply, 403, MCP_SERVER_ERROR, "Forbidden: MCP on a peer's port answers callers on this machine (loopback) only");
    });
    // After the route's own onRequest hooks (Host, Origin, the token), so only an authenticated
    // request spends, and with the body parsed: the peer's depth cap and its rate budgets.
    scope.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const body = request.body;
      if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
        return refuse(reply, 400, JSONRPC_INVALID_PARAMS, `Invalid params: the request nests deeper than ${MAX_JSON_DEPTH} levels; the cap is ${MAX_JSON_DEPTH}`, firstRequestId(body));
      }
      const principal = (request.raw as { auth?: { clientId?: string } }).auth?.clientId ?? PRINCIPAL_ANONYMOUS;
      const own = options.requestLimiter.take(principal);
      const address = own.ok ? options.addressLimiter.take(canonicalIp(request.ip) ?? request.ip) : own;
      if (!address.ok) {
        const message = own.ok ? 'rate limited: too many requests from this address (all its MCP and MCPv2 callers together)' : 'rate limited: too many MCP requests to this peer';
        reply.header('retry-after', String(Math.ceil(address.retryAfterMs / 1000)));
        return refuse(reply, 429, JSONRPC_RATE_LIMITED, message, firstRequestId(body));
      }
    });
    route = await registerMcpRoute(scope, { factory, token, logger: options.logger });
  });
  if (!route) throw new Error('the MCP route was not registered');
  return route;
}

/** Where a loopback MCP host reaches a peer bound at `bindHost`, or null when the peer binds no loopback address. */
export function peerMcpUrl(bindHost: string, port: number): string | null {
  if (bindHost === '0.0.0.0' || bindHost === '::' || /^127\./.test(bindHost)) return `http://${/^127\./.test(bindHost) ? bindHost : '127.0.0.1'}:${port}/mcp`;
  if (bindHost === '::1') return `http://[::1]:${port}/mcp`;
  return null;
}
