/**
 * Custom skills, declared in a JSON file (examples in resources/skills/). Two kinds:
 *
 * - a `response` template, rendered from the call's arguments (`{{args.name}}`): no code runs;
 * - a `script` (JavaScript, the body of an async function of `args`), which runs in a child
 *   Node process, never in the plane's or the peer's, inside the sandbox of skill-sandbox.ts
 *   (bubblewrap namespaces and a whole-process memory limit on Linux, Node's permission model
 *   everywhere): a wall-clock deadline that kills its process group, an empty environment, a
 *   fresh scratch folder (its only readable and writable one, removed afterwards) and a cap on
 *   what it may print. Every way it can end reaches the caller as a SkillExecutionError naming
 *   what happened; a refused access is the script's own error (e.g. "Access to this API has
 *   been restricted"). Where bubblewrap is missing the peer says so at start.
 *
 * `get_skill` returns a custom skill's metadata and never runs its script. A file that does not
 * parse, or declares a skill whose name clashes with a built-in, is refused with a message
 * naming the file and the field.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { render, TemplateError } from '../runtime/template';
import { runSandboxed } from './skill-sandbox';
import { skillError } from './skills';

const CustomSkillSpecSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'a lowercase name: letters, digits and underscores'),
    description: z.string().min(1).max(1000),
    inputSchema: z.record(z.string(), z.unknown()).default({ type: 'object' }),
    response: z.unknown().optional(),
    script: z.string().min(1).max(100_000).optional(),
    timeoutMs: z.number().int().min(10).max(60_000).default(2_000),
    memoryMb: z.number().int().min(16).max(1024).default(64),
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

const ajv = new Ajv2020({ allErrors: true, strict: false });

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
      validate = ajv.compile(spec.inputSchema);
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

/** Runs a script in a child process with the script's limits; renders a template in place. */
export class CustomSkillRunner {
  async run(skill: CustomSkill, args: Record<string, unknown>): Promise<unknown> {
    if (skill.kind === 'template') {
      try {
        return render(skill.spec.response, { args });
      } catch (error) {
        if (error instanceof TemplateError) throw skillError(Mcpv2Error.InvalidParams, error.message);
        throw error;
      }
    }
    return runScript(skill.spec.script!, args, skill.spec.timeoutMs, skill.spec.memoryMb);
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

async function runScript(script: string, args: Record<string, unknown>, timeoutMs: number, memoryMb: number): Promise<unknown> {
  const scratch = mkdtempSync(join(tmpdir(), 'agentplane-skill-'));
  let outcome;
  try {
    outcome = await runSandboxed({ scratch, program: RUNNER, input: JSON.stringify({ script, args }), timeoutMs, memoryMb, maxOutputBytes: MAX_OUTPUT });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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
    throw fail(`the skill failed: ${message}`);
  }
  return answer.result;
}
