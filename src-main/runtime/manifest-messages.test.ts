/**
 * A manifest that does not load says what is wrong and how to fix it, for the mistakes people
 * make: a required field left out, a value of the wrong type, an unknown (often misspelt) key,
 * a step or grant of no known kind, and a file that is not valid YAML or JSON (with its line).
 * Every message starts with the file, then the field, so `agents list` can show all three.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileAgent, loadAgentsFrom, ManifestError } from './manifest';

const base = {
  name: 'ok',
  description: 'fine',
  input: { type: 'object', properties: { text: { type: 'string' } } },
  steps: [{ model: { provider: 'local', prompt: '{{input.text}}' } }],
  grants: [{ kind: 'model', name: 'local' }],
};

/** The ManifestError compiling `raw` throws. */
function refusal(raw: unknown, source = 'bad.yaml'): ManifestError {
  try {
    compileAgent(raw, source);
  } catch (error) {
    if (error instanceof ManifestError) return error;
    throw error;
  }
  throw new Error('the manifest loaded');
}

const without = (key: keyof typeof base) => Object.fromEntries(Object.entries(base).filter(([k]) => k !== key));

describe('manifest errors say what is missing and how to fix it', () => {
  it('a manifest with no input schema says so, names the field and says to add `input:`', () => {
    const error = refusal(without('input'));
    expect(error.message).toMatch(/^bad\.yaml: input: the manifest has no input schema: add `input:`/);
    expect(error.message).not.toContain('expected record');
    expect(error.field).toBe('input');
    expect(error.source).toBe('bad.yaml');
  });

  it.each([
    ['name', /^bad\.yaml: name: the manifest has no name: add `name:`/],
    ['description', /^bad\.yaml: description: the manifest has no description: add `description:`/],
    ['steps', /^bad\.yaml: steps: the manifest has no steps: add `steps:`/],
  ] as const)('a manifest with no %s says so', (key, message) => {
    expect(refusal(without(key)).message).toMatch(message);
  });

  it('a value of the wrong type names what it must be and what it is', () => {
    expect(refusal({ ...base, input: 'text' }).message).toMatch(/^bad\.yaml: input: must be a mapping .*, not a string/);
    expect(refusal({ ...base, steps: { model: { provider: 'local', prompt: 'x' } } }).message).toMatch(/^bad\.yaml: steps: must be a list .*, not a mapping/);
    expect(refusal({ ...base, budget: { maxTokens: 'lots' } }).message).toMatch(/^bad\.yaml: budget\.maxTokens: must be a number, not a string/);
  });

  it('an unknown key says to remove it, and suggests the key it was probably meant to be', () => {
    const colour = refusal({ ...base, colour: 'red' });
    expect(colour.message).toMatch(/^bad\.yaml: colour: unknown key `colour`: remove it/);
    expect(colour.field).toBe('colour');
    expect(refusal({ ...base, grant: [] }).message).toMatch(/grant: unknown key `grant`.*did you mean `grants`\?/);
    const nested = refusal({ ...base, steps: [{ model: { provider: 'local', promt: 'x', prompt: 'y' } }] });
    expect(nested.message).toMatch(/^bad\.yaml: steps\.0\.model\.promt: unknown key `promt`.*did you mean `prompt`\?/);
  });

  it('a field missing inside a step names the step and the field to add', () => {
    const error = refusal({ ...base, steps: [{ model: { provider: 'local' } }] });
    expect(error.message).toMatch(/^bad\.yaml: steps\.0\.model\.prompt: `prompt` is missing: add `prompt:`/);
    expect(error.field).toBe('steps.0.model.prompt');
  });

  it('a step or a grant of no known kind lists the kinds there are', () => {
    expect(refusal({ ...base, steps: [{ dance: {} }] }).message).toMatch(/^bad\.yaml: steps\.0: a step is one of `model:`, `tool:`.*; this one has `dance:`/);
    expect(refusal({ ...base, grants: [{ kind: 'modle', name: 'local' }] }).message).toMatch(/^bad\.yaml: grants\.0\.kind: must be one of model, tool, .*, not `modle`/);
    expect(refusal({ ...base, grants: [{ name: 'local' }] }).message).toMatch(/^bad\.yaml: grants\.0\.kind: the grant has no kind: add `kind:` \(one of model, tool/);
  });

  it('a file that is not valid YAML or JSON names the line to fix; an empty one says it is empty', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ap-manifest-messages-'));
    writeFileSync(join(dir, 'a.yaml'), 'name: a\ndescription: x\ninput: { type: object\nsteps: []\n');
    let error: unknown;
    try {
      loadAgentsFrom(dir);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).message).toMatch(/a\.yaml: not valid YAML at line \d+, column \d+: /);
    expect((error as ManifestError).line).toBeGreaterThanOrEqual(3);

    const json = mkdtempSync(join(tmpdir(), 'ap-manifest-messages-'));
    writeFileSync(join(json, 'b.json'), '{\n  "name": "b",\n  nope\n}\n');
    expect(() => loadAgentsFrom(json)).toThrow(/b\.json: not valid JSON at line 3/);

    const empty = mkdtempSync(join(tmpdir(), 'ap-manifest-messages-'));
    writeFileSync(join(empty, 'c.yaml'), '# nothing yet\n');
    expect(() => loadAgentsFrom(empty)).toThrow(/c\.yaml: the file is empty: /);
  });
});
