/**
 * An erased payload in the timeline (docs/ERASURE.md): its row and inspector say when, by whom
 * and why it was erased, and the inspector's hash check recomputes from the body as stored (the
 * sealed one the hash covers), so an erased record still reads as matching.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { recordPreimage } from '../../../src-shared/journal/record-hash';
import { preimageOf } from './record-hash-check';
import { summarizeRecord } from './record-summary';

const stored = { agent: 'summarize', owner: 'user:alice', chain: ['user:alice'], sealed: { subject: 'user:alice', period: '2026-12', key: 'ab'.repeat(16), nonce: 'AAAAAAAAAAAAAAAA', data: 'c2VhbGVk' } };
const envelope = { seq: 1, runId: 'run-1', kind: 'RunAdmitted', v: 2, time: '2026-12-07T10:00:00.000Z', prevHash: '0'.repeat(64) };
const hash = createHash('sha256').update(recordPreimage({ ...envelope, body: stored })).digest('hex');
const { sealed: _sealed, ...clear } = stored;
const view = { ...envelope, hash, known: true, stored, body: { ...clear, erased: { at: '2026-12-07T12:00:00.000Z', by: 'user:dpo', reason: 'GDPR request 12' } } } as unknown as RecordView;

describe('an erased payload in the UI', () => {
  it('reads as erased on its date, by whom, because of what', () => {
    expect(summarizeRecord(view)).toBe('summarize for user:alice · payload erased on 2026-12-07, by user:dpo, because GDPR request 12');
  });

  it('the hash check recomputes from the stored (sealed) body, and matches', () => {
    expect(createHash('sha256').update(preimageOf(view)).digest('hex')).toBe(hash);
    const { stored: _s, ...withoutStored } = view as RecordView & { stored: unknown };
    expect(createHash('sha256').update(preimageOf(withoutStored as RecordView)).digest('hex')).not.toBe(hash);
  });
});
