import { describe, expect, it } from 'vitest';
import { recordPreimage } from '../../src-shared/journal/record-hash';
import { envelopeOfPreimage, parseRecordLine } from './bundle';
import { leafHash, leafHashOfHex, sha256Hex } from './merkle';
import { fromHex } from './hex';

const PREV = 'ab'.repeat(32);

function preimageOf(fields: { kind: string; runId: string | null; seq: number; time: string; body: Record<string, unknown> }): string {
  return recordPreimage({ ...fields, prevHash: PREV, v: 1 } as Parameters<typeof recordPreimage>[0]);
}

describe('envelopeOfPreimage: the envelope without parsing the body', () => {
  it('reads what JSON.parse reads, whatever the body holds (keys named like envelope fields, escapes, unicode)', () => {
    const bodies: Array<Record<string, unknown>> = [
      {},
      { kind: 'Fake', seq: 99, nested: { ',"kind":"': '"quoted" \\ back', runId: 'x' } },
      { text: 'line\nbreak\ttab \u0001 ☃ 𝄞', list: [1, 'two', null, { seq: 3 }] },
    ];
    for (const body of bodies) {
      for (const runId of [null, 'run-1', 'run "quoted" \\ ☃']) {
        const preimage = preimageOf({ kind: 'EffectStarted', runId, seq: 42, time: '2026-12-01T00:00:00.000Z', body });
        const parsed = JSON.parse(preimage) as { seq: number; prevHash: string; kind: string; runId: string | null };
        expect(envelopeOfPreimage(preimage)).toEqual({ seq: parsed.seq, prevHash: parsed.prevHash, kind: parsed.kind, runId: parsed.runId });
      }
    }
  });

  it('answers null for text that is not a canonical preimage, so the caller parses it whole', () => {
    const good = preimageOf({ kind: 'RunAdmitted', runId: 'r', seq: 1, time: 't', body: { a: 1 } });
    expect(envelopeOfPreimage(good)).not.toBeNull();
    expect(envelopeOfPreimage(good.slice(0, 40) + '}')).toBeNull(); // cut short
    expect(envelopeOfPreimage(good.replace('"seq":1', '"seq":"1"'))).toBeNull(); // seq not a number
    expect(envelopeOfPreimage(good.replace(PREV, PREV.toUpperCase()))).toBeNull(); // not lowercase hex
    expect(envelopeOfPreimage(good.replace('"kind":"RunAdmitted"', '"kind":"Run\\qAdmitted"'))).toBeNull(); // an escape JSON does not know
    expect(envelopeOfPreimage(`{"seq":1,${good.slice(1)}`)).toBeNull(); // not body first
  });

  it('a bundle line with a non-canonical record still fails as not valid JSON, naming it', () => {
    const line = `{"hash":"${'0'.repeat(64)}","record":{"body":{,"kind":"X","prevHash":"${PREV}","runId":null,"seq":1,"time":"t","v":1}}`;
    // The tail is canonical; the body is not JSON: the record is parsed for what it is only when its hash is checked.
    expect(parseRecordLine(line).unreadable).toBeUndefined();
    expect(parseRecordLine('{"hash":"00","record":{"body":{}').unreadable).toMatch(/not of the form|not valid JSON/);
  });
});

describe('leafHashOfHex', () => {
  it('equals leafHash(fromHex(hex)) and refuses anything but 64 hex digits', () => {
    const hex = sha256Hex('a record');
    expect(leafHashOfHex(hex)).toEqual(leafHash(fromHex(hex)));
    expect(() => leafHashOfHex(hex.slice(2))).toThrow(TypeError);
    expect(() => leafHashOfHex(`${hex.slice(0, 62)}zz`)).toThrow(TypeError);
  });
});
