import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonical-json';
import { recordPreimage } from './record-hash';

const jsonValue = fc.jsonValue({ maxDepth: 3 }).filter((v) => {
  try {
    canonicalize(v);
    return true;
  } catch {
    return false;
  }
});

describe('recordPreimage', () => {
  it('equals the RFC 8785 form of the whole envelope without its hash, for any record', () => {
    fc.assert(
      fc.property(
        fc.record({
          seq: fc.integer({ min: 1, max: 2 ** 40 }),
          runId: fc.option(fc.string(), { nil: null }),
          kind: fc.constantFrom('RunAdmitted', 'EffectDone', 'HologramProjected'),
          v: fc.integer({ min: 1, max: 9 }),
          time: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          body: fc.dictionary(fc.string(), jsonValue),
          prevHash: fc.stringMatching(/^[0-9a-f]{64}$/),
        }),
        (record) => {
          expect(recordPreimage(record)).toBe(canonicalize(record));
        },
      ),
      { numRuns: 300 },
    );
  });
});
