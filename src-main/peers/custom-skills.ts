/**
 * Custom skills, declared in a JSON file (examples in resources/skills/). Two kinds:
 *
 * - a `response` template, rendered from the call's arguments (`{{args.name}}`): no code runs;
 * - a `script` (JavaScript, the body of an async function of `args`), which runs in a child
 *   Node process, never in the plane's or the peer's, inside the sandbox of skill-sandbox.ts
 *   (bubblewrap namespaces and a whole-process memory limit on Linux, Node's permission model
 *   everywhere): a wall-clock deadline that kills its process group, an empty environment, a
 *   fresh scratch folder (its only readable and writable one, gone afterwards) of at most its
 *   declared `scratchMb` (a tmpfs inside the sandbox under bubblewrap, so never the host's
 *   disk; see "File space" in skill-sandbox.ts) and a cap on what it may print. Every way it
 *   can end reaches the caller as a SkillExecutionError naming what happened; a refused access
 *   is the script's own error (e.g. "Access to this API has been restricted"). Where
 *   bubblewrap is missing the peer says so at start.
 *
 * Scripts running at once. Invariant: one peer (one CustomSkillRunner) runs at most
 * `maxRunning` scripts at a time and holds at most `maxWaiting` more in a first-come queue;
 * any call past that is refused at once as busy (-32005, the peer's rate-limit code, so the
 * caller backs off and retries). Why: any loopback caller can get a session, and each script is
 * a sandbox of about three processes holding up to its memory and scratch: without the bound,
 * one session's 30 parallel calls ran 30 sandboxes (90 processes) at once, and more would fill
 * the host's process table and memory. A waiting call keeps its deadline and its run's cancel:
 * it leaves the queue as busy once it has waited the skill's `timeoutMs` (so a script may take
 * up to twice its timeoutMs from call to answer: one wait, one run), or as cancelled when its
 * run is, and in neither case does its script start.
 *
 * `get_skill` returns a custom skill's metadata and never runs its script. A file that does not
 * parse, or declares a skill whose name clashes with a built-in, is refused with a message
 * naming the file and the field.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lazyAjv2020 } from '../base/json-schema-validator';
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { render, TemplateError } from '../runtime/template';
import { runSandboxed, sandboxKind } from './skill-sandbox';
import { skillError } from './skill-error';

/** A script's scratch space when it declares none, and the most it may declare (MB). */
export const DEFAULT_SCRATCH_MB = 16;
export const MAX_SCRATCH_MB = 256;

/** How many scripts a peer runs at once, and how many more calls it holds waiting. */
export const DEFAULT_MAX_RUNNING_SCRIPTS = 4;
export const DEFAULT_MAX_WAITING_SCRIPTS = 16;

const CustomSkillSpecSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'a lowercase name: letters, digits and underscores'),
    description: z.string().min(1).max(1000),
    inputSchema: z.record(z.string(), z.unknown()).default({ type: 'object' }),
    response: z.unknown().optional(),
    script: z.string().min(1).max(100_000).optional(),
    timeoutMs: z.number().int().min(10).max(60_000).default(2_000),
    memoryMb: z.number().int().min(16).max(1024).default(64),
    /**
     * The most the script may write into its scratch folder. It is memory under bubblewrap
     * (a tmpfs), so the cap is small by default and bounded: 256 MB times the scripts a peer
     * runs at once stays within a modest machine.
     */
    scratchMb: z.number().int().min(1).max(MAX_SCRATCH_MB).default(DEFAULT_SCRATCH_MB),
  })
  .strict()
  .refine((s) => (s.response === undefined) !== (s.script === undefined), { message: 'a custom skill has exactly one of response or script' });

export const CustomSkillFileSchema = z.object({ skills: z.array(CustomSkillSpecSchema) }).strict();

export interface CustomSkill {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  kind: 'template' | 'script';
  spec: z.infer<typeof CustomSkillSpecSchema>;
  validateArguments(args: unknown): string[];
}

export class CustomSkillError extends Error {
  override readonly name = 'CustomSkillError';
}

const ajv = lazyAjv2020({ allErrors: true, strict: false });

export function loadCustomSkills(file: string, reserved: readonly string[]): CustomSkill[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CustomSkillError(`custom skills file ${file}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = CustomSkillFileSchema.safeParse(raw);
  if (!parsed.success) throw new CustomSkillError(`custom skills file ${file}: ${describeZodError(parsed.error)}`);
  const seen = new Set<string>();
  return parsed.data.skills.map((spec, index) => {
    if (reserved.includes(spec.name)) throw new CustomSkillError(`custom skills file ${file}: skills.${index}.name: ${spec.name} is a built-in skill`);
    if (seen.has(spec.name)) throw new CustomSkillError(`custom skills file ${file}: skills.${index}.name: ${spec.name} is declared twice`);
    seen.add(spec.name);
    let validate;
    try {
      validate = ajv().compile(spec.inputSchema);
    } catch (error) {
      throw new CustomSkillError(`custom skills file ${file}: skills.${index}.inputSchema: ${(error as Error).message}`);
    }
    return {
      name: spec.name,
      description: spec.description,
      inputSchema: spec.inputSchema,
      kind: spec.script ? 'script' : 'template',
      spec,
      validateArguments: (args) => (validate(args) ? [] : (validate.errors ?? []).map((e) => `arguments${e.instancePath.replace(/\//g, '.')}: ${e.message ?? 'invalid'}`)),
    };
  });
}

export interface CustomSkillRunnerOptions {
  /** Scripts run at once (default DEFAULT_MAX_RUNNING_SCRIPTS). */
  maxRunning?: number;
  /** Calls held waiting for one of those places (default DEFAULT_MAX_WAITING_SCRIPTS); past it, busy. */
  maxWaiting?: number;
}

export interface CustomSkillCallOptions {
  /** The run's cancel: aborting it takes a waiting call out of the queue, or kills its running script. */
  signal?: AbortSignal;
}

/**
 * Runs a script in a child process with the script's limits; renders a template in place. One
 * per peer: the bound on scripts at once (see the top of this file) is this object's.
 */
export class CustomSkillRunner {
  readonly bounds: { maxRunning: number; maxWaiting: number };
  private running = 0;
  /** Calls waiting for a place, first come first served; `admit` hands one the place. */
  private readonly waiting: Array<{ admit(): void }> = [];

  constructor(options: CustomSkillRunnerOptions = {}) {
    const { maxRunning = DEFAULT_MAX_RUNNING_SCRIPTS, maxWaiting = DEFAULT_MAX_WAITING_SCRIPTS } = options;
    if (!Number.isSafeInteger(maxRunning) || maxRunning < 1) throw new RangeError(`maxRunning must be a positive integer, got ${maxRunning}`);
    if (!Number.isSafeInteger(maxWaiting) || maxWaiting < 0) throw new RangeError(`maxWaiting must be a non-negative integer, got ${maxWaiting}`);
    this.bounds = { maxRunning, maxWaiting };
  }

  async run(skill: CustomSkill, args: Record<string, unknown>, options: CustomSkillCallOptions = {}): Promise<unknown> {
    if (skill.kind === 'template') {
      try {
        return render(skill.spec.response, { args });
      } catch (error) {
        if (error instanceof TemplateError) throw skillError(Mcpv2Error.InvalidParams, error.message);
        throw error;
      }
    }
    // Taken synchronously, before this method's first await: calls are placed in call order.
    const release = await this.place(skill.spec.timeoutMs, options.signal);
    try {
      return await runScript(skill.spec, args, options.signal);
    } finally {
      release();
    }
  }

  /**
   * A place to run a script: at once if fewer than maxRunning run, else after waiting in the
   * queue (until `waitMs` or the signal ends the wait), else refused as busy. Resolves with the
   * function that gives the place back (to the next waiting call, if any).
   */
  private place(waitMs: number, signal: AbortSignal | undefined): Promise<() => void> {
    const cancelled = () => skillError(Mcpv2Error.SkillExecutionError, 'the call was cancelled before its script started');
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.running < this.bounds.maxRunning) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    const { maxRunning, maxWaiting } = this.bounds;
    if (this.waiting.length >= maxWaiting) {
      return Promise.reject(skillError(Mcpv2Error.RateLimited, `the peer is busy: ${maxRunning} skill scripts are running and ${maxWaiting} are waiting; try again later`));
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        admit: () => {
          stopWaiting();
          resolve(this.releaser());
        },
      };
      const leave = (error: Error) => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        stopWaiting();
        reject(error);
      };
      const timer = setTimeout(() => leave(skillError(Mcpv2Error.RateLimited, `the peer is busy: no sandbox was free within the skill's ${waitMs} ms limit; try again later`)), waitMs);
      const onAbort = () => leave(cancelled());
      const stopWaiting = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Gives a place back once: to the first waiting call (the count stays), or frees it. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next.admit();
      else this.running--;
    };
  }
}

// Runs inside the sandbox. The variables the sandbox itself sets (glibc's arena count,
// Electron's run-as-node switch, bwrap's PWD) are dropped before the script runs, so it sees
// an empty environment. A refused access is reported with what was refused (Node's permission
// errors carry `permission` and `resource`).
const RUNNER = `
delete process.env.MALLOC_ARENA_MAX;
delete process.env.ELECTRON_RUN_AS_NODE;
delete process.env.PWD;
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  try {
    const { script, args } = JSON.parse(input);
    const fn = new (Object.getPrototypeOf(async function () {}).constructor)('args', script);
    const result = await fn(args);
    process.stdout.write(JSON.stringify({ ok: true, result: result === undefined ? null : result }));
  } catch (error) {
    let message = String((error && error.message) || error);
    if (error && error.code === 'ERR_ACCESS_DENIED' && error.permission) message += ' (' + error.permission + (error.resource ? ' ' + error.resource : '') + ')';
    process.stdout.write(JSON.stringify({ ok: false, message: message.slice(0, 300) }));
  }
});`;

const MAX_OUTPUT = 1024 * 1024;

/** What a script's own error says when the memory limit, not the script, refused an allocation. */
const ALLOCATION_REFUSED = /Array buffer allocation failed|could not allocate memory|Cannot allocate memory|ENOMEM/;
/** What a script's own error says when its file space ran out: the tmpfs (ENOSPC) or RLIMIT_FSIZE (EFBIG). */
const SPACE_REFUSED = /ENOSPC|EFBIG|no space left on device|file too large/i;

async function runScript(spec: CustomSkill['spec'], args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown> {
  const { timeoutMs, memoryMb, scratchMb } = spec;
  // Under bubblewrap this folder is not mounted (the scratch is a tmpfs inside the sandbox) and
  // stays empty; elsewhere it is the scratch, bounded by skill-sandbox.ts.
  const scratch = mkdtempSync(join(tmpdir(), 'agentplane-skill-'));
  let outcome;
  try {
    outcome = await runSandboxed({ scratch, scratchBytes: scratchMb * 1024 * 1024, program: RUNNER, input: JSON.stringify({ script: spec.script, args }), timeoutMs, memoryMb, maxOutputBytes: MAX_OUTPUT, ...(signal ? { signal } : {}) });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  // Under bubblewrap, /tmp is a second tmpfs, sized by memoryMb: a full /tmp says ENOSPC too.
  const scratchLimit = `the skill exceeded its ${scratchMb} MB scratch limit (scratchMb${sandboxKind() === 'bubblewrap' ? `; /tmp holds ${memoryMb} MB, memoryMb` : ''})`;
  const fail = (message: string) => skillError(Mcpv2Error.SkillExecutionError, message);
  switch (outcome.kind) {
    case 'sandbox-failed':
      throw fail(`the skill could not run: ${outcome.message}`);
    case 'timeout':
      throw fail(`the skill ran past its ${timeoutMs} ms limit`);
    case 'output-limit':
      throw fail(`the skill printed more than ${MAX_OUTPUT} bytes`);
    case 'out-of-memory':
      throw fail(`the skill exceeded its ${memoryMb} MB memory limit (out of memory)`);
    case 'scratch-limit':
      throw fail(`${scratchLimit}: it wrote more than that into its folder`);
    case 'cancelled':
      throw fail('the call was cancelled while its script ran');
  }
  let answer: { ok: boolean; result?: unknown; message?: string };
  try {
    answer = JSON.parse(outcome.stdout) as typeof answer;
  } catch {
    const why = outcome.stderr.trim().split('\n').pop()?.slice(0, 200);
    throw fail(outcome.code === 0 ? 'the skill did not answer' : `the skill's process ended with ${outcome.signal ? `signal ${outcome.signal}` : `code ${outcome.code}`}${why ? `: ${why}` : ''}`);
  }
  if (!answer.ok) {
    const message = answer.message ?? 'unknown error';
    if (ALLOCATION_REFUSED.test(message)) throw fail(`the skill exceeded its ${memoryMb} MB memory limit (${message})`);
    if (SPACE_REFUSED.test(message)) throw fail(`${scratchLimit}: ${message}`);
    throw fail(`the skill failed: ${message}`);
  }
  return answer.result;
}
