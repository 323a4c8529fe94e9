/**
 * A peer's runtime as the door its MCP and A2A surfaces call (plane/peer-mcp.ts, plane/peer-a2a.ts):
 * the commands the plane's surfaces use (`agents.list`, `runs.start`, `runs.get`, `runs.list`,
 * `runs.cancel`, `journal.records`, `approvals.decide`), parsed and mapped by the plane's one
 * dispatcher (plane/dispatch.ts) with handlers over this peer's runtime. A skill call through
 * either protocol is admitted through the peer's one door (peers/skill-admission.ts), so it is a
 * skill run like any other: admitted (host `peer:<id>`), journaled, metered, replayed. The
 * admission rules as they apply to these callers are in plane/peer-mcp.ts.
 *
 * Kept apart from the protocol servers: the A2A push worker reads tasks through this door from the
 * moment a peer starts, while the MCP SDK and the A2A server are loaded on their first request
 * (plane/lazy-routes.ts).
 */
import type { z } from 'zod';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { Result } from '../../src-shared/ipc/result';
import { skillArguments, type BuiltinSkill, type SkillDescriptor } from '../../src-shared/protocol/mcpv2';
import { errorFields, type Logger } from '../base/logger';
import { PlaneError } from '../base/plane-error';
import type { Journal } from '../journal/journal';
import type { CustomSkill } from '../peers/custom-skills';
import type { SkillAdmission } from '../peers/skill-admission';
import { BUILTIN_SKILLS } from '../peers/skills';
import { PRINCIPAL_ANONYMOUS } from '../protocols/mcp/mcp-factory';
import type { McpPlaneDoor } from '../protocols/mcp/plane-door';
import type { Runtime } from '../runtime/runtime';
import { dispatchCommand, type CallContext, type CommandHandlers } from './dispatch';
import { runChangesOf } from './journal-changes';
import { journalHandlers } from './journal-handlers';
import { approveWithOf } from './mcp-address';
import { runtimeHandlers } from './runtime-handlers';

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

/** Where a loopback MCP host reaches a peer bound at `bindHost`, or null when the peer binds no loopback address. */
export function peerMcpUrl(bindHost: string, port: number): string | null {
  if (bindHost === '0.0.0.0' || bindHost === '::' || /^127\./.test(bindHost)) return `http://${/^127\./.test(bindHost) ? bindHost : '127.0.0.1'}:${port}/mcp`;
  if (bindHost === '::1') return `http://[::1]:${port}/mcp`;
  return null;
}
