import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CustomSkillError, CustomSkillRunner, loadCustomSkills } from './custom-skills';

function skillsFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'ap-custom-')), 'skills.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const runner = new CustomSkillRunner();

describe('custom skills', () => {
  it('renders a template skill from its arguments, running no code', async () => {
    const [skill] = loadCustomSkills(skillsFile({ skills: [{ name: 'greet', description: 'says hello', inputSchema: { type: 'object', required: ['who'], properties: { who: { type: 'string' } } }, response: { greeting: 'hello {{args.who}}' } }] }), ['ping']);
    expect(skill!.kind).toBe('template');
    expect(skill!.validateArguments({})).toEqual(["arguments: must have required property 'who'"]);
    expect(await runner.run(skill!, { who: 'Ada' })).toEqual({ greeting: 'hello Ada' });
  });

  it('runs a script in a child process and returns its value', async () => {
    const [skill] = loadCustomSkills(skillsFile({ skills: [{ name: 'sum', description: 'adds', script: 'return args.a + args.b;' }] }), []);
    expect(await runner.run(skill!, { a: 2, b: 40 })).toBe(42);
    const [pid] = loadCustomSkills(skillsFile({ skills: [{ name: 'pid', description: 'whose process', script: 'return process.pid;' }] }), []);
    expect(await runner.run(pid!, {})).not.toBe(process.pid);
  });

  it('ends a script that runs past its time limit, or exhausts its memory, or throws', async () => {
    const [slow] = loadCustomSkills(skillsFile({ skills: [{ name: 'slow', description: 'loops', script: 'for (;;) {}', timeoutMs: 300 }] }), []);
    await expect(runner.run(slow!, {})).rejects.toThrow(/ran past its 300 ms limit/);
    const [hungry] = loadCustomSkills(skillsFile({ skills: [{ name: 'hungry', description: 'eats', script: 'const a = []; for (;;) a.push(new Array(1e6).fill(1));', memoryMb: 32, timeoutMs: 20000 }] }), []);
    await expect(runner.run(hungry!, {})).rejects.toThrow(/out of memory|ended with code/);
    const [broken] = loadCustomSkills(skillsFile({ skills: [{ name: 'broken', description: 'throws', script: 'throw new Error("nope")' }] }), []);
    await expect(runner.run(broken!, {})).rejects.toThrow(/the skill failed: nope/);
  }, 30_000);

  it('runs a script with an empty environment', async () => {
    process.env.AGENTPLANE_TEST_SECRET = 'do-not-leak';
    const [env] = loadCustomSkills(skillsFile({ skills: [{ name: 'env', description: 'env', script: 'return Object.keys(process.env);' }] }), []);
    expect(await runner.run(env!, {})).not.toContain('AGENTPLANE_TEST_SECRET');
  });

  it('refuses a malformed file clearly, naming the file and the field', () => {
    expect(() => loadCustomSkills(skillsFile('{ nope'), [])).toThrow(/not valid JSON/);
    expect(() => loadCustomSkills(skillsFile({ skills: [{ name: 'Bad Name', description: 'x', response: 1 }] }), [])).toThrow(/skills\.0\.name/);
    expect(() => loadCustomSkills(skillsFile({ skills: [{ name: 'both', description: 'x', response: 1, script: 'return 1' }] }), [])).toThrow(/exactly one of response or script/);
    expect(() => loadCustomSkills(skillsFile({ skills: [{ name: 'ping', description: 'x', response: 1 }] }), ['ping'])).toThrow(/ping is a built-in skill/);
    expect(() => loadCustomSkills(skillsFile({ skills: [{ name: 'a', description: 'x', response: 1 }, { name: 'a', description: 'y', response: 2 }] }), [])).toThrow(CustomSkillError);
  });
});
