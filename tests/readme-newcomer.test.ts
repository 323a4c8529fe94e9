/**
 * What the README tells a newcomer in their first hour stays true to the tree:
 * - the Node it asks for is the one package.json declares, and the packages it says `npm install`
 *   warns about (EBADENGINE, on that Node) are exactly those of the lock whose `engines.node`
 *   leaves it out: a new one is a decision to write down, a gone one a line to remove;
 * - the `thrifty` example it gives stops at the 100-token ceiling, waiting for a person (run by
 *   the CLI as a real process, its TypeScript entry through tsx, on the keyless local model).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from './support/journal-support';
import { runCliFromSource } from './support/cli-from-source';

const root = join(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

type Version = [number, number, number];

/** `X`, `X.Y`, `X.Y.Z`, `X.x`: the parts given (a wildcard ends them). */
function partsOf(text: string): number[] {
  const parts: number[] = [];
  for (const part of text.replace(/^v/, '').split('.')) {
    if (!/^\d+$/.test(part)) break;
    parts.push(Number(part));
  }
  return parts;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

const filled = (parts: number[]): Version => [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];

/** Whether `version` satisfies one comparator of a node-semver range (the forms engines use). */
function satisfiesComparator(comparator: string, version: Version): boolean {
  const [, op = '', rest = ''] = /^(>=|<=|>|<|=|\^|~)?\s*(.*)$/.exec(comparator)!;
  const parts = partsOf(rest);
  if (parts.length === 0) return true; // `*`, `x`
  const low = filled(parts);
  switch (op) {
    case '>=':
      return compare(version, low) >= 0;
    case '>':
      return compare(version, low) > 0;
    case '<=':
      return compare(version, low) <= 0;
    case '<':
      return compare(version, low) < 0;
    case '^': {
      const high: Version = low[0] > 0 ? [low[0] + 1, 0, 0] : low[1] > 0 ? [0, low[1] + 1, 0] : [0, 0, low[2] + 1];
      return compare(version, low) >= 0 && compare(version, high) < 0;
    }
    case '~': {
      const high: Version = parts.length > 1 ? [low[0], low[1] + 1, 0] : [low[0] + 1, 0, 0];
      return compare(version, low) >= 0 && compare(version, high) < 0;
    }
    default:
      // `X`, `X.x`, `X.Y`, `=X.Y.Z`: every part given must match.
      return parts.every((part, i) => version[i] === part);
  }
}

function rangeAdmits(range: string, version: Version): boolean {
  return range.split('||').some((alternative) => {
    const comparators = alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return comparators.every((c) => satisfiesComparator(c, version));
  });
}

describe('README: setting up', () => {
  const minimum = /Node\.js (\d+\.\d+) or newer/.exec(readme)?.[1];

  it('asks for the Node that package.json declares', () => {
    expect(minimum).toBeDefined();
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${minimum}`);
  });

  it('names exactly the packages whose declared Node leaves that one out (the EBADENGINE warnings of npm install)', () => {
    expect(rangeAdmits('^20.19.0 || >=22.12.0', [20, 19, 0])).toBe(true);
    expect(rangeAdmits('>= 22.12.0', [20, 19, 0])).toBe(false);
    expect(rangeAdmits('20 || >=22', [20, 19, 0])).toBe(true);
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string }; optional?: boolean }> };
    const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const version = filled(partsOf(minimum!));
    const demanding = new Set(
      Object.entries(lock.packages)
        .filter(([path, p]) => path !== '' && !p.optional && typeof p.engines?.node === 'string' && !rangeAdmits(p.engines.node, version))
        .map(([path]) => nameOf(path)),
    );
    const paragraph = readme.split(/\n\s*\n/).find((p) => p.includes('EBADENGINE'));
    expect(paragraph, 'the README says nothing of the EBADENGINE warnings npm install prints').toBeDefined();
    const inLock = new Set(Object.keys(lock.packages).map(nameOf));
    const named = new Set([...paragraph!.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!).filter((name) => inLock.has(name)));
    expect(named).toEqual(demanding);
  });
});

describe('README: the runtime', () => {
  it('its thrifty example stops at the 100-token ceiling, waiting for a person', { timeout: 60_000 }, async () => {
    const example = /agentplane run thrifty --input '([^']+)' --wait/.exec(readme);
    expect(example, 'the README gives no `agentplane run thrifty` example').not.toBeNull();
    const ran = await runCliFromSource(['run', 'thrifty', '--input', example![1]!, '--wait', '--json', '--data-dir', tempDataDir('ap-readme-thrifty-')]);
    expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true, result: { status: 'suspended', budget: { maxTokens: 100 }, pending: { reason: 'budget', subject: { ceiling: 'tokens' } } } });
  });
});
