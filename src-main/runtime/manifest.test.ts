import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compileAgent, loadAgentsFrom, ManifestError } from './manifest';
import { parse as parseYaml } from 'yaml';
import { appRoot } from '../base/app-paths';
import { BUNDLED_AGENTS_FILE, loadAgents, resourcesDir } from '../plane/plane-config';

const base = {
  name: 'ok',
  description: 'fine',
  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  steps: [{ model: { provider: 'local', prompt: '{{input.text}}' } }],
  grants: [{ kind: 'model', name: 'local' }],
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('manifests parsed at build time', () => {
  it('are taken only for the exact text they were parsed from; any other file is parsed as it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ap-preparsed-'));
    const text = `name: ok\ndescription: from the file\ninput: { type: object }\nsteps: [{ model: { provider: local, prompt: hi } }]\ngrants: [{ kind: model, name: local }]\n`;
    writeFileSync(join(dir, 'a.yaml'), text);
    writeFileSync(join(dir, 'b.yaml'), text.replace('name: ok', 'name: other'));
    // The pre-parsed value differs from the text's own parse, so which one was taken shows.
    const stand = { ...base, description: 'from the build' };
    const byHash = (forA: string) => loadAgentsFrom(dir, { preParsed: { 'a.yaml': { sha256: forA, value: stand } } });
    const taken = byHash(sha256(text));
    expect(taken.map((a) => a.manifest.description)).toEqual(['from the build', 'from the file']);
    // Edited after the build: the hash no longer matches, and the file is parsed.
    expect(byHash(sha256(`${text}\n`)).map((a) => a.manifest.description)).toEqual(['from the file', 'from the file']);
    // A pre-parsed value is checked like any manifest.
    expect(() => loadAgentsFrom(dir, { preParsed: { 'a.yaml': { sha256: sha256(text), value: { ...base, steps: 'no' } } } })).toThrow(ManifestError);
  });

  it("the build's out/main/bundled-agents.json holds every bundled YAML manifest at its current text, as yaml parses it", () => {
    const built = join(appRoot(), 'out', 'main', BUNDLED_AGENTS_FILE);
    // npm test builds before the unit tests run (scripts/check.mjs); run `npm run build` first when running this alone.
    expect(existsSync(built), `${built} (npm run build)`).toBe(true);
    const parsed = JSON.parse(readFileSync(built, 'utf8')) as Record<string, { sha256: string; value: unknown }>;
    const files = readdirSync(join(resourcesDir(), 'agents')).filter((f) => /\.ya?ml$/.test(f)).sort();
    expect(Object.keys(parsed).sort()).toEqual(files);
    for (const file of files) {
      const text = readFileSync(join(resourcesDir(), 'agents', file), 'utf8');
      expect(parsed[file]!.sha256, file).toBe(sha256(text));
      expect(parsed[file]!.value, file).toEqual(parseYaml(text));
    }
  });
});

describe('agent manifests', () => {
  it('ships a default set that loads, with an approval agent and a small-budget agent', () => {
    const agents = loadAgentsFrom(join(resourcesDir(), 'agents'));
    const names = agents.map((a) => a.manifest.name);
    expect(names).toEqual(expect.arrayContaining(['summarize', 'write-note', 'thrifty', 'pay-vendor', 'ask-first']));
    expect(agents.some((a) => a.manifest.grants.some((g) => g.approve))).toBe(true);
    expect(agents.find((a) => a.manifest.name === 'thrifty')!.manifest.budget.maxTokens).toBe(100);
  });

  it("checks every bundled agent's schemas against the 2020-12 meta-schema, which loading them skips", () => {
    // loadAgents compiles the bundled manifests without the meta-schema check (a sixth of
    // serve's start); this is the check in its place. A bundled schema it refuses fails here.
    const meta = new Ajv2020({ strict: true });
    const agents = loadAgentsFrom(join(resourcesDir(), 'agents'), { bundled: true });
    expect(agents.length).toBeGreaterThan(0);
    for (const agent of agents) {
      const schemas = [agent.manifest.input, ...agent.manifest.steps.flatMap((step) => ('model' in step && step.model.schema ? [step.model.schema] : []))];
      for (const schema of schemas) expect(meta.validateSchema(schema) ? [] : meta.errors, agent.source).toEqual([]);
    }
    // The check is one that can fail: a schema with a wrongly typed keyword is refused by it.
    expect(meta.validateSchema({ type: 'object', description: 5 })).toBe(false);
  });

  it("checks the person's own agents against the meta-schema at load; bundled ones are compiled as they are", () => {
    // A number where the meta-schema wants a string: ajv's compile alone lets it through.
    const wrong = { ...base, input: { type: 'object', description: 5 } };
    expect(() => compileAgent(wrong, 'own.json')).toThrow(/own\.json: input: not a valid JSON Schema/);
    expect(() => compileAgent(wrong, 'bundled.json', { bundled: true })).not.toThrow();
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-own-agents-'));
    writeFileSync(join(dir, 'wrong.json'), JSON.stringify(wrong));
    expect(() => loadAgentsFrom(dir)).toThrow(/wrong\.json: input: not a valid JSON Schema/);
  });

  it('validates input against the JSON Schema, naming the path', () => {
    const agent = compileAgent(base, 'x.json');
    expect(agent.validateInput({ text: 'hi' })).toEqual([]);
    expect(agent.validateInput({})).toEqual(["input: must have required property 'text'"]);
    expect(agent.validateInput({ text: 3 })).toEqual(['input.text: must be string']);
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a bad name', { name: 'Bad Name' }, /x\.json: name: a lowercase name/],
    ['no steps', { steps: [] }, /x\.json: steps: /],
    ['an unknown field', { colour: 'red' }, /x\.json: colour: unknown key `colour`: remove it/],
    ['a step of no known kind', { steps: [{ dance: {} }] }, /x\.json: steps\.0: /],
    ['a negative budget', { budget: { maxTokens: -5 } }, /x\.json: budget\.maxTokens: /],
    ['a payment grant without approve', { grants: [{ kind: 'payment', name: 'request', approve: false }] }, /a payment grant always needs a person/],
    ['an invalid JSON Schema', { input: { type: 'objekt' } }, /x\.json: input: not a valid JSON Schema/],
    ['an external $ref', { input: { $ref: 'https://example.com/schema.json' } }, /external \$ref is not allowed/],
    ['a step whose grant is missing', { grants: [] }, /steps\.0: needs the grant model:local/],
    ['an mcp step without its exact grant', { steps: [{ mcp: { server: 'files', tool: 'delete' } }], grants: [{ kind: 'mcp', name: 'files/read' }] }, /steps\.0: needs the grant mcp:files\/delete/],
    ['an mcp grant that names no tool', { grants: [{ kind: 'mcp', name: 'files' }] }, /x\.json: grants\.0\.name: an MCP tool as <server>\/<tool>/],
    ['an mcp step naming a server that is no name', { steps: [{ mcp: { server: 'Files!', tool: 'read' } }] }, /x\.json: steps\.0/],
  ];
  for (const [what, change, message] of bad) {
    it(`refuses ${what}, naming the field`, () => {
      expect(() => compileAgent({ ...base, ...change }, 'x.json')).toThrow(ManifestError);
      expect(() => compileAgent({ ...base, ...change }, 'x.json')).toThrow(message);
    });
  }

  it('loads an mcp step with its exact grant, server/tool, and an approve flag', () => {
    const agent = compileAgent({ ...base, steps: [{ as: 'read', mcp: { server: 'files', tool: 'read_file', args: { path: '{{input.text}}' } } }], grants: [{ kind: 'mcp', name: 'files/read_file', approve: true }] }, 'x.json');
    expect(agent.manifest.steps[0]).toEqual({ as: 'read', mcp: { server: 'files', tool: 'read_file', args: { path: '{{input.text}}' } } });
    expect(agent.manifest.grants[0]).toEqual({ kind: 'mcp', name: 'files/read_file', approve: true });
  });

  it('refuses malformed YAML or JSON files and duplicate names, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ap-manifests-'));
    writeFileSync(join(dir, 'a.yaml'), 'name: [unclosed\n');
    expect(() => loadAgentsFrom(dir)).toThrow(/a\.yaml: not valid YAML/);
    const dir2 = mkdtempSync(join(tmpdir(), 'ap-manifests-'));
    writeFileSync(join(dir2, 'a.json'), JSON.stringify(base));
    writeFileSync(join(dir2, 'b.json'), JSON.stringify(base));
    expect(() => loadAgentsFrom(dir2)).toThrow(/b\.json: name: an agent named ok is already declared in .*a\.json/);
    const dir3 = mkdtempSync(join(tmpdir(), 'ap-manifests-'));
    writeFileSync(join(dir3, 'c.json'), '{ nope');
    expect(() => loadAgentsFrom(dir3)).toThrow(/c\.json: not valid JSON/);
  });

  it("loads the person's own agents from the data dir beside the bundled ones, refusing a clash", () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ap-data-'));
    const own = join(dataDir, 'agents');
    mkdirSync(own);
    writeFileSync(join(own, 'mine.json'), JSON.stringify({ ...base, name: 'mine' }));
    expect(loadAgents(dataDir).map((a) => a.manifest.name)).toContain('mine');
    writeFileSync(join(own, 'clash.json'), JSON.stringify({ ...base, name: 'summarize' }));
    expect(() => loadAgents(dataDir)).toThrow(/clash\.json: name: an agent named summarize is already declared/);
  });
});
