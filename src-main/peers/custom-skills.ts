/**
 * Custom skills, declared in a JSON file (examples in resources/skills/). Two kinds:
 *
 * - a `response` template, rendered from the call's arguments (`{{args.name}}`): no code runs;
 * - a `script` (JavaScript, the body of an async function of `args`), which runs in a child
 *   Node process, never in the plane's or the peer's: with a wall-clock deadline, a V8 heap
 *   cap, an empty environment, a scratch working folder and a cap on what it may print. As the
 *   seed says of its own sandbox, this bounds time and memory but is not an isolation boundary
 *   (no seccomp, no namespaces, the same uid): load only scripts you would run yourself.
 *
 * `get_skill` returns a custom skill's metadata and never runs its script. A file that does not
 * parse, or declares a skill whose name clashes with a built-in, is refused with a message
 * naming the file and the field.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { render, TemplateError } from '../runtime/template';
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

const RUNNER = `
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
    process.stdout.write(JSON.stringify({ ok: false, message: String(error && error.message || error).slice(0, 300) }));
  }
});`;

const MAX_OUTPUT = 1024 * 1024;

function runScript(script: string, args: Record<string, unknown>, timeoutMs: number, memoryMb: number): Promise<unknown> {
  const scratch = mkdtempSync(join(tmpdir(), 'agentplane-skill-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${memoryMb}`, '-e', RUNNER], { cwd: scratch, env: {}, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    let overflow = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (out.length + chunk.length > MAX_OUTPUT) {
        overflow = true;
        child.kill('SIGKILL');
      } else out += chunk;
    });
    child.on('error', (error) => reject(skillError(Mcpv2Error.SkillExecutionError, `the skill's process could not start: ${error.message}`)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(scratch, { recursive: true, force: true });
      if (overflow) return reject(skillError(Mcpv2Error.SkillExecutionError, `the skill printed more than ${MAX_OUTPUT} bytes`));
      if (signal === 'SIGKILL') return reject(skillError(Mcpv2Error.SkillExecutionError, `the skill ran past its ${timeoutMs} ms limit`));
      let answer: { ok: boolean; result?: unknown; message?: string };
      try {
        answer = JSON.parse(out) as typeof answer;
      } catch {
        return reject(skillError(Mcpv2Error.SkillExecutionError, code === 0 ? 'the skill did not answer' : `the skill's process ended with code ${code} (out of memory?)`));
      }
      if (!answer.ok) return reject(skillError(Mcpv2Error.SkillExecutionError, `the skill failed: ${answer.message ?? 'unknown error'}`));
      resolve(answer.result);
    });
    child.stdin.end(JSON.stringify({ script, args }));
  });
}
