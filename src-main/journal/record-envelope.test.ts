import { describe, expect, it } from 'vitest';
import { recordPreimage } from '../../src-shared/journal/record-hash';
import { seededRandom } from '../../tests/support/journal-support';
import { envelopeOfPreimage, parseRecordLine, recordOfLineBytes } from './bundle-format';
import { leafHash, leafHashOfHex, perfectRootInPlace, rootFromLeafHashes, sha256Hex, writeLeafHashOfHex } from './merkle';
import { fromHex } from './hex';
import type { VerifiableRecord } from './verify';

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

/** A record as parseRecordLine gives it, with a byte preimage read back as its text. */
function asText(record: VerifiableRecord): VerifiableRecord {
  return typeof record.preimage === 'string' ? record : { ...record, preimage: Buffer.from(record.preimage).toString('utf8') };
}

/** The record recordOfLineBytes reads from `line`'s UTF-8 bytes, placed between other bytes as in a bundle. */
function fromBytes(line: string): VerifiableRecord {
  const bytes = Buffer.concat([Buffer.from('x\n'), Buffer.from(line), Buffer.from('\n{"next":1}')]);
  return asText(recordOfLineBytes(bytes, 2, 2 + Buffer.byteLength(line)));
}

describe('recordOfLineBytes: the record parseRecordLine reads, from the line\'s bytes', () => {
  const lineOf = (preimage: string, hash = sha256Hex(preimage)) => `{"hash":"${hash}","record":${preimage}}`;
  const good = preimageOf({ kind: 'EffectStarted', runId: 'run-1', seq: 42, time: '2026-12-01T00:00:00.000Z', body: { a: 1 } });

  it('agrees on plain lines and on every envelope the backward reading leaves to the regex or to JSON.parse', () => {
    const lines = [
      lineOf(good),
      ...[null, 'run-1', 'run "quoted" \\ ☃', 'tab\there', '', 'ünïcode'].map((runId) => lineOf(preimageOf({ kind: 'EffectDone', runId, seq: 7, time: 't', body: { k: ',"kind":"x"' } }))),
      ...['Run\u0001Admitted', 'Kind "q"', 'ключ', ''].map((kind) => lineOf(preimageOf({ kind, runId: 'r', seq: 1, time: '2026', body: {} }))),
      ...['', 'ti"me', 'ti\\me', '☃'].map((time) => lineOf(preimageOf({ kind: 'K', runId: null, seq: 3, time, body: { t: time } }))),
      ...[0, 1, 9, 10, 2 ** 53 - 1].map((seq) => lineOf(preimageOf({ kind: 'K', runId: 'r', seq, time: 't', body: {} }))),
      // The good preimage with one part of its envelope changed, each a form the backward reading refuses.
      ...(
        [
          ['"seq":42', '"seq":042'],
          ['"seq":42', '"seq":9007199254740993'],
          ['"seq":42', '"seq":12345678901234567'],
          ['"seq":42', '"seq":"42"'],
          ['"v":1', '"v":01'],
          ['"v":1}', '"v":1 }'],
          [PREV, PREV.toUpperCase()],
          [PREV, PREV.slice(2)],
          ['"runId":"run-1"', '"runId":nul'],
          ['"runId":"run-1"', '"runId":7'],
          ['"kind":"EffectStarted"', '"kind":"Effect\\qStarted"'],
          ['"time":"2026-12-01T00:00:00.000Z"', '"time":"2026\u0007"'],
          ['{"body":', '{"bodx":'],
          [',"kind":', ',"kinx":'],
        ] as const
      ).map(([from, to]) => lineOf(good.replace(from, to))),
      lineOf(good, 'ü'.repeat(32)),
      lineOf(good, 'A'.repeat(64)),
      lineOf(good).slice(0, -1),
      `{"hash":"${sha256Hex(good)}","proof":[],"record":${good}}`,
      `{"hash": "${sha256Hex(good)}","record":${good}}`,
      '{"checkpoint":"a.b.c"}',
      'not json at all',
      '',
    ];
    for (const line of lines) expect(fromBytes(line), line).toEqual(asText(parseRecordLine(line)));
  });

  it('agrees on lines with random bytes changed, inserted or removed (valid UTF-8 only: the chunk declines the rest)', () => {
    const seed = 1602;
    const random = seededRandom(seed);
    const alphabet = ['"', '\\', ',', ':', '}', '{', '0', '9', 'a', 'f', 'n', 'null', '☃', 'é', ' ', '\t', 'x'];
    const base = [lineOf(good), lineOf(preimageOf({ kind: 'RunSealed', runId: null, seq: 100, time: 't', body: { records: 3 } }))];
    for (let trial = 0; trial < 3000; trial++) {
      let line = base[trial % base.length]!;
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (line.length + 1));
        const piece = alphabet[Math.floor(random() * alphabet.length)]!;
        const how = random();
        line = how < 0.4 ? line.slice(0, at) + piece + line.slice(at + 1) : how < 0.8 ? line.slice(0, at) + piece + line.slice(at) : line.slice(0, at) + line.slice(at + 1);
      }
      expect(fromBytes(line), `seed ${seed}, trial ${trial}: ${line}`).toEqual(asText(parseRecordLine(line)));
    }
  });
});

describe('leaf and subtree hashes written in place', () => {
  it('writeLeafHashOfHex writes leafHashOfHex, and perfectRootInPlace is the RFC 6962 root of the leaves it is given', () => {
    const leaves = Array.from({ length: 16 }, (_, i) => leafHashOfHex(sha256Hex(`record ${i}`)));
    const flat = Buffer.alloc(16 * 32 + 32);
    leaves.forEach((_, i) => writeLeafHashOfHex(sha256Hex(`record ${i}`), flat, 32 + i * 32));
    for (let i = 0; i < 16; i++) expect(new Uint8Array(flat.subarray(32 + i * 32, 64 + i * 32))).toEqual(leaves[i]);
    expect(() => writeLeafHashOfHex('zz'.repeat(32), flat, 0)).toThrow(TypeError);
    for (const width of [1, 2, 4, 8, 16]) {
      const copy = Buffer.from(flat);
      expect(perfectRootInPlace(copy, 32, width)).toEqual(rootFromLeafHashes(leaves.slice(0, width)));
    }
  });
});
