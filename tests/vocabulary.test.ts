/**
 * Each enum of the plane's vocabulary is written once, in src-shared, and imported everywhere
 * else. This scans every production source file (src-*, not tests) for groups of string
 * literals (a type union `'a' | 'b'`, an array `['a', 'b']`, `z.enum([...])`, a tuple) and fails,
 * naming the file and line, when a group holds two or more members of a vocabulary enum outside
 * the one file that defines it.
 *
 * Enums share words ('running' is a run status, a peer status and a plane state), so a group is
 * taken for the enum(s) it overlaps most: a peer status list is not a copy of the plane state
 * because it also holds 'running' and 'stopping'. Enums written once beside their only use (in
 * records.ts and contract.ts) are registered too, so that their definitions are not taken for
 * copies of the enums they overlap.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PlaneStatusSchema } from '../src-shared/ipc/contract';
import { CredentialUseSchema, HoldTargetKindSchema, recordBodies } from '../src-shared/journal/records';
import { DecisionSchema, PermissionOutcomeSchema, RecoveryResolutionSchema } from '../src-shared/vocabulary/decisions';
import { DispositionSchema, EffectKindSchema } from '../src-shared/vocabulary/effects';
import { FailureCodeSchema } from '../src-shared/vocabulary/failures';
import { PeerAuthModeSchema, PeerStatusSchema } from '../src-shared/vocabulary/peers';
import { RunOutcomeSchema, RunStatusSchema } from '../src-shared/vocabulary/runs';
import { CeilingSchema } from '../src-shared/vocabulary/spend';
import { WaitReasonSchema } from '../src-shared/vocabulary/waits';
import { ProvenanceVerdictSchema } from '../src-shared/vocabulary/provenance';

const ROOT = join(import.meta.dirname, '..');

interface VocabularyEnum {
  name: string;
  members: readonly string[];
  /** The one file that writes its literal list (relative to the repository root). */
  home: string;
}

const VOCABULARY: VocabularyEnum[] = [
  { name: 'decision', members: DecisionSchema.options, home: 'src-shared/vocabulary/decisions.ts' },
  { name: 'recovery resolution', members: RecoveryResolutionSchema.options, home: 'src-shared/vocabulary/decisions.ts' },
  { name: 'permission outcome', members: PermissionOutcomeSchema.options, home: 'src-shared/vocabulary/decisions.ts' },
  { name: 'peer auth mode', members: PeerAuthModeSchema.options, home: 'src-shared/vocabulary/peers.ts' },
  { name: 'peer status', members: PeerStatusSchema.options, home: 'src-shared/vocabulary/peers.ts' },
  { name: 'run status', members: RunStatusSchema.options, home: 'src-shared/vocabulary/runs.ts' },
  { name: 'run outcome', members: RunOutcomeSchema.options, home: 'src-shared/vocabulary/runs.ts' },
  { name: 'wait reason', members: WaitReasonSchema.options, home: 'src-shared/vocabulary/waits.ts' },
  { name: 'provenance verdict', members: ProvenanceVerdictSchema.options, home: 'src-shared/vocabulary/provenance.ts' },
  { name: 'disposition', members: DispositionSchema.options, home: 'src-shared/vocabulary/effects.ts' },
  { name: 'effect kind', members: EffectKindSchema.options, home: 'src-shared/vocabulary/effects.ts' },
  { name: 'failure code', members: FailureCodeSchema.options, home: 'src-shared/vocabulary/failures.ts' },
  { name: 'ceiling', members: CeilingSchema.options, home: 'src-shared/vocabulary/spend.ts' },
  // Written once, beside their only use.
  { name: 'budget verdict', members: recordBodies.BudgetVerdict[1].shape.verdict.options, home: 'src-shared/journal/records.ts' },
  { name: 'run trigger', members: recordBodies.RunAdmitted[1].shape.trigger.shape.via.options, home: 'src-shared/journal/records.ts' },
  { name: 'peer lifecycle event', members: recordBodies.PeerLifecycle[1].shape.event.options, home: 'src-shared/journal/records.ts' },
  { name: 'credential kind', members: CredentialUseSchema.shape.kind.options, home: 'src-shared/journal/records.ts' },
  { name: 'hold target kind', members: HoldTargetKindSchema.options, home: 'src-shared/vocabulary/holds.ts' },
  { name: 'plane state', members: PlaneStatusSchema.shape.state.options, home: 'src-shared/ipc/contract.ts' },
  { name: 'plane host', members: PlaneStatusSchema.shape.host.options, home: 'src-shared/ipc/contract.ts' },
];

interface LiteralGroup {
  line: number;
  values: string[];
  /** The group is the argument of `z.enum(...)`. */
  zEnum: boolean;
}

const stringOf = (node: ts.Node): string | null => (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : null);

/** `'a'` as a type, or `z.literal('a')`. */
function literalValue(node: ts.Node): string | null {
  if (ts.isLiteralTypeNode(node)) return stringOf(node.literal);
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'literal' && node.arguments.length === 1) {
    return stringOf(node.arguments[0]!);
  }
  return stringOf(node);
}

const isZEnumArgument = (node: ts.Node): boolean =>
  ts.isCallExpression(node.parent) && ts.isPropertyAccessExpression(node.parent.expression) && node.parent.expression.name.text === 'enum' && node.parent.arguments[0] === node;

/** Every group of string literals written together in one source text. */
export function literalGroups(fileName: string, text: string): LiteralGroup[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const groups: LiteralGroup[] = [];
  const visit = (node: ts.Node): void => {
    let members: readonly ts.Node[] | null = null;
    if (ts.isUnionTypeNode(node)) members = node.types;
    else if (ts.isTupleTypeNode(node)) members = node.elements;
    else if (ts.isArrayLiteralExpression(node)) members = node.elements;
    if (members) {
      const values = [...new Set(members.map(literalValue).filter((v): v is string => v !== null))];
      if (values.length >= 2) groups.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, values, zEnum: isZEnumArgument(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return groups;
}

/** Where a group repeats a vocabulary enum outside its home, one line per finding. */
export function repetitions(file: string, text: string, vocabulary: readonly VocabularyEnum[] = VOCABULARY): string[] {
  const found: string[] = [];
  for (const group of literalGroups(file, text)) {
    const overlaps = vocabulary.map((e) => ({ e, hits: group.values.filter((v) => e.members.includes(v)) })).filter((o) => o.hits.length >= 2);
    if (overlaps.length === 0) continue;
    const most = Math.max(...overlaps.map((o) => o.hits.length));
    const best = overlaps.filter((o) => o.hits.length === most);
    if (best.some((o) => o.e.home === file)) continue;
    for (const { e, hits } of best) found.push(`${file}:${group.line}: the ${e.name} enum written again (${hits.map((h) => `'${h}'`).join(' | ')}); import it from ${e.home}`);
  }
  return found;
}

function productionSources(): string[] {
  const files: string[] = [];
  for (const top of readdirSync(ROOT).filter((name) => name.startsWith('src-'))) {
    for (const entry of readdirSync(join(ROOT, top), { recursive: true, encoding: 'utf8' })) {
      if (!/\.tsx?$/.test(entry) || /\.test\.tsx?$/.test(entry) || entry.split(/[\\/]/).includes('node_modules')) continue;
      files.push(relative(ROOT, join(ROOT, top, entry)).split('\\').join('/'));
    }
  }
  return files.sort();
}

describe('the vocabulary is written once', () => {
  it('finds a repeated enum in a source text (the scanner bites)', () => {
    const text = [
      "type A = 'approve' | 'deny';",
      "const b = z.enum(['shared-secret', 'identity', 'both']);",
      "if (!['retry', 'landed'].includes(x)) throw new Error();",
      "const d = z.union([z.literal('DidNotHappen'), z.literal('InDoubt')]);",
      "const fine = x === 'approve' || x === 'deny';",
      "const status: [string, string][] = [['running', 'Running'], ['suspended', 'Waiting']];",
    ].join('\n');
    expect(repetitions('src-main/example.ts', text).map((f) => f.split(': ')[0])).toEqual([
      'src-main/example.ts:1',
      'src-main/example.ts:2',
      'src-main/example.ts:3',
      'src-main/example.ts:4',
    ]);
    // The home of an enum may write it; a list that overlaps another enum more is that enum's.
    expect(repetitions('src-shared/vocabulary/decisions.ts', "z.enum(['approve', 'deny', 'snooze'])")).toEqual([]);
    expect(repetitions('src-shared/vocabulary/peers.ts', "PeerStatusSchema.extract(['starting', 'running', 'stopping'])")).toEqual([]);
    expect(repetitions('src-main/x.ts', "type S = 'starting' | 'running' | 'stopping';")).toEqual([
      "src-main/x.ts:1: the peer status enum written again ('starting' | 'running' | 'stopping'); import it from src-shared/vocabulary/peers.ts",
    ]);
  });

  it('every vocabulary enum is defined in its home', () => {
    for (const e of VOCABULARY) {
      const text = readFileSync(join(ROOT, e.home), 'utf8');
      const defined = literalGroups(e.home, text).some((g) => g.values.length === e.members.length && e.members.every((m) => g.values.includes(m)));
      expect(defined, `${e.name} is not written in ${e.home}`).toBe(true);
    }
  });

  it('no production source writes an enum of the vocabulary outside its home', () => {
    const found = productionSources().flatMap((file) => repetitions(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(found, `\n${found.join('\n')}\n`).toEqual([]);
  });

  it('every z.enum of the plane (src-shared/ipc, journal, vocabulary) is a registered enum, in its home', () => {
    const unregistered: string[] = [];
    for (const file of productionSources().filter((f) => /^src-shared\/(ipc|journal|vocabulary)\//.test(f))) {
      for (const group of literalGroups(file, readFileSync(join(ROOT, file), 'utf8')).filter((g) => g.zEnum)) {
        const registered = VOCABULARY.some((e) => e.home === file && e.members.length === group.values.length && group.values.every((v) => e.members.includes(v)));
        if (!registered) unregistered.push(`${file}:${group.line}: z.enum([${group.values.map((v) => `'${v}'`).join(', ')}]) is not a registered vocabulary enum in its home`);
      }
    }
    expect(unregistered, `\n${unregistered.join('\n')}\n`).toEqual([]);
  });
});
