/**
 * The one door into a peer's runtime: every skill call, whichever surface it came in by (MCPv2's
 * `tools/call` and `/mcpv2/ai/{provider}` in peer-server.ts, MCP at `/mcp` and A2A through
 * plane/peer-mcp.ts's peerDoor), is admitted here, so the checks that keep a call's arguments
 * out of the permanent journal are written once and hold the same on every surface:
 *
 * - depth: nesting deeper than 64 levels is refused before anything walks the arguments
 *   recursively (input-bounds.ts);
 * - size: arguments over 1 MB are refused before the run is admitted, so a refused call
 *   journals nothing (input-bounds.ts);
 * - uploads: upload_file's bytes are staged under their SHA-256 and the run's input names the
 *   digest, never the bytes (a content that is not the base64 it claims is refused here);
 * - large arguments: over 64 KiB they go to the peer's blobs, named in the journal by digest
 *   and size (input-blobs.ts).
 *
 * A refusal is a PlaneError (AP_BAD_REQUEST) whose message names the skill and the field; each
 * surface words it on its own wire (MCPv2 `-32602 invalid params: <message>`, MCP and A2A
 * `-32602 Invalid params: <message>`), so one oversized argument reads the same everywhere.
 * What stays with a surface is what is the surface's own: who the caller is, whether the skill
 * is listed there, its conversation scoping, and (MCP) the schema check before admission.
 *
 * The runtime is reached only through this door: the surfaces hold no Runtime to start runs with.
 */
import { ErrorCode } from '../../src-shared/ipc/errors';
import { PlaneError } from '../base/plane-error';
import { JournalError } from '../journal/journal-error';
import type { Runtime } from '../runtime/runtime';
import type { RunHistory } from '../runtime/run-history';
import { externalizeArguments, type AdmittedArguments, type InputBlobs } from './input-blobs';
import { argumentSizeProblem, MAX_JSON_DEPTH, nestsDeeperThan } from './input-bounds';
import type { UploadStaging } from './upload-staging';

type StartRequest = Parameters<Runtime['start']>[0];

/** One skill call as a surface hands it to the door. */
export interface SkillCall {
  /** The skill's name as its surfaces list it (`ping`); its run's program is `skill:<name>`. */
  skill: string;
  arguments: Record<string, unknown>;
  /** What the skill's run is given besides its arguments (the conversation key, a provider). */
  skillContext: Record<string, unknown>;
  /** Who calls: the run's chain, owner and input provenance. */
  principal: string;
  /** The surface, recorded as the run's trigger. */
  via: StartRequest['via'];
  /** The run (and step) whose effect made this call, as the caller stated them. */
  parent?: { runId: string; step: number };
  /** The context (a run's id) this run continues, when the caller named one. */
  runContext?: string;
  /**
   * The surface's own check of the arguments, run after the door's depth and size checks (so a
   * recursive validator never walks what they refuse) and before anything is staged or admitted;
   * it throws its refusal.
   */
  check?: (args: Record<string, unknown>) => void;
}

export interface SkillAdmission {
  /** Checks the call, admits its run and answers at once (the run goes on). */
  start(call: SkillCall): Promise<{ runId: string }>;
  /** Checks the call, admits its run and answers once it has sealed or waits for a person. */
  run(call: SkillCall): Promise<RunHistory>;
}

export interface SkillAdmissionDeps {
  runtime: Pick<Runtime, 'start' | 'run'>;
  staging: UploadStaging;
  blobs: InputBlobs;
}

const refuse = (message: string) => new PlaneError(ErrorCode.BadRequest, message);

/**
 * Why `args` may not be admitted for `skill` (depth, then size), or null. The one check every
 * surface's refusal of an oversized or over-nested argument comes from.
 */
export function argumentsRefusal(skill: string, args: Record<string, unknown>): string | null {
  // Depth first (iteratively), before anything walks the arguments recursively; then size.
  if (nestsDeeperThan(args, MAX_JSON_DEPTH)) return `input for skill:${skill} nests deeper than ${MAX_JSON_DEPTH} levels; the cap is ${MAX_JSON_DEPTH}`;
  const tooBig = argumentSizeProblem(skill, args);
  return tooBig ? `input for skill:${skill} is too large: input.${tooBig}` : null;
}

/**
 * upload_file's bytes staged under their SHA-256, the arguments naming the digest: the journal
 * is permanent, so an upload's content in a RunAdmitted record could never be erased
 * (delete_file would delete the file and keep its copy forever). A content that is not a string
 * is left for the skill to refuse, naming the field.
 */
async function stagedUpload(staging: UploadStaging, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (typeof args.content !== 'string') return args;
  const encoding = args.encoding === 'base64' ? 'base64' : 'utf8';
  const bytes = Buffer.from(args.content, encoding);
  if (encoding === 'base64' && bytes.toString('base64').replace(/=+$/, '') !== args.content.replace(/\s+/g, '').replace(/=+$/, '')) {
    throw refuse('input for skill:upload_file does not match its schema: input.content: not valid base64');
  }
  const { content: _content, ...rest } = args;
  return { ...rest, encoding, staged: await staging.put(bytes) };
}

/** The call's arguments as its run is admitted with them, or a PlaneError (AP_BAD_REQUEST) naming why not. */
async function admittedArguments(deps: Pick<SkillAdmissionDeps, 'staging' | 'blobs'>, call: SkillCall): Promise<AdmittedArguments> {
  const refusal = argumentsRefusal(call.skill, call.arguments);
  if (refusal) throw refuse(refusal);
  call.check?.(call.arguments);
  return externalizeArguments(call.skill === 'upload_file' ? await stagedUpload(deps.staging, call.arguments) : call.arguments, deps.blobs);
}

export function createSkillAdmission(deps: SkillAdmissionDeps): SkillAdmission {
  async function request(call: SkillCall): Promise<StartRequest> {
    const admitted = await admittedArguments(deps, call);
    return {
      agent: `skill:${call.skill}`,
      input: { ...admitted, context: call.skillContext },
      chain: [call.principal],
      via: call.via,
      inputProvenance: call.principal,
      ...(call.parent ? { parentRunId: call.parent.runId, parentStep: call.parent.step } : {}),
      ...(call.runContext !== undefined ? { context: call.runContext } : {}),
    };
  }
  /** The caller's to fix: a value the journal cannot hold was sent, and nothing was admitted. */
  async function admitting<T>(call: SkillCall, admit: () => Promise<T>): Promise<T> {
    try {
      return await admit();
    } catch (error) {
      if (error instanceof JournalError && error.code === 'Refused') {
        throw refuse(`input for skill:${call.skill} holds a value that cannot be journaled (a lone surrogate, or an integer beyond 2^53)`);
      }
      throw error;
    }
  }
  return {
    async start(call) {
      const prepared = await request(call);
      return admitting(call, () => deps.runtime.start(prepared));
    },
    async run(call) {
      const prepared = await request(call);
      return admitting(call, () => deps.runtime.run(prepared));
    },
  };
}
