/**
 * Answers whose shape the peer protocol fixes (docs/PEER-PROTOCOL.md), over real HTTP to a peer
 * listening on loopback: a slot naming a provider the protocol does not know is -32010
 * "Unsupported provider" rather than answered, and `pay` carries the protocol's fields
 * (`status: "pending"`, a `transaction_id` that names no real transaction) beside AgentPlane's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mcpv2Error, PAY_PROTOCOL_STATUS, PENDING_APPROVAL } from '../../src-shared/protocol/mcpv2';
import { PROVIDERS } from '../../src-shared/protocol/history';
import { startTestPeer, type TestPeer } from '../../tests/support/peer-support';

let testPeer: TestPeer;

beforeAll(async () => {
  testPeer = await startTestPeer('answers', { secret: 'protocol-answers-secret', ratePerSecond: 100_000 });
});

afterAll(() => testPeer.close());

interface Answer {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

async function batch(slots: unknown[]): Promise<Answer[]> {
  const response = await fetch(`http://127.0.0.1:${testPeer.peer.port}/mcpv2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${testPeer.session()}`, 'content-type': 'application/json' },
    body: JSON.stringify(slots),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer[];
}

const call = (id: number, name: string, args: Record<string, unknown>, context?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
  ...(context ? { context } : {}),
});

describe('a slot naming an unsupported context.provider', () => {
  it('is answered -32010 "Unsupported provider", naming the provider and the supported ones; its neighbours are answered', async () => {
    const answers = await batch([
      call(1, 'ask', { query: 'Hello' }, { provider: 'llama' }),
      call(2, 'ping', {}, { provider: 'gemini' }),
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {}, context: { provider: 'Claude ' } },
      call(4, 'ask', { query: 'Hello' }, { provider: 'claude' }),
    ]);
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4]);
    expect(answers[0]).toEqual({ jsonrpc: '2.0', id: 1, error: { code: Mcpv2Error.UnsupportedProvider, message: 'Unsupported provider', data: { provider: 'llama', supported: [...PROVIDERS] } } });
    expect(answers[0]!.result).toBeUndefined();
    expect(answers[1]!.result).toBeDefined();
    expect(answers[2]!.error).toMatchObject({ code: -32010, message: 'Unsupported provider', data: { provider: 'Claude ' } });
    expect(answers[3]!.error).toBeUndefined();
    expect(answers[3]!.result).toBeDefined();
  });

  it('cuts a long provider name in the answer rather than echo it whole', async () => {
    const [long] = await batch([call(3, 'ping', {}, { provider: 'x'.repeat(5000) })]);
    expect(long!.error?.code).toBe(Mcpv2Error.UnsupportedProvider);
    expect((long!.error?.data as { provider: string }).provider).toBe('x'.repeat(80));
  });
});

describe('pay', () => {
  it('answers the protocol\'s status "pending" and a transaction_id that names no real transaction, beside AgentPlane\'s fields', async () => {
    const [paid] = await batch([call(1, 'pay', { amount: 12.5, currency: 'EUR', payee: 'vendor-1' })]);
    const result = paid!.result!;
    expect(result.status).toBe(PAY_PROTOCOL_STATUS);
    expect(result.status).toBe('pending');
    expect(result.transaction_id).toMatch(/^not-a-payment-run-[0-9a-f]{20}$/);
    expect(result.transaction_id).toBe(`not-a-payment-${String(result.runId)}`);
    // AgentPlane's own answer, unchanged beside them: it waits for a person, and moved no money.
    expect(result).toMatchObject({ approval: PENDING_APPROVAL, moved: false, reason: 'payment' });
    expect(result.runId).toMatch(/^run-/);
    expect(typeof result.waitId).toBe('string');
    expect(String(result.note)).toContain('nothing has been done yet');
  });
});
