/**
 * The protocol's scenario suite (docs/PEER-PROTOCOL.md, "What the test suite actually exercises"):
 * two REAL, independent peer processes, each binding its own address —
 *
 *   peer A  127.0.0.1  stateless
 *   peer B  127.0.0.2  LLM mode, loaded with resources/skills/custom_skills.json
 *
 * — sharing one secret and one plane data dir (the design's "one data dir, several peers"),
 * plus two small peers with low limits for the rate limiter (R1: MCPV2_RATE_LIMIT; R2:
 * MCPV2_SESSION_RATE_LIMIT and MCPV2_SESSION_TIMEOUT=1, both set through the protocol's
 * environment variables) and an identity-mode peer Y for per-peer credentials.
 *
 * The 17 categories run MCPV2_TEST_ITERATIONS times (3 by default) against the same processes;
 * the once-only checks (sessions bound to the caller's IP, binding, a malformed custom skills
 * file, identity mode) run after them. Every peer writes to a log file, never an unread pipe,
 * and its port is read back from its `MCPV2_BOUND_PORT=` line.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCardSchema, HealthSchema, MAX_BATCH_SIZE, Mcpv2Error } from '../src-shared/protocol/mcpv2';
import { Mcpv2Client, PeerClientError } from '../src-main/peers/peer-client';
import { mintPeerCredential } from '../src-main/peers/peer-credentials';
import { PeerRegistry } from '../src-main/peers/peer-registry';
import { mintSession } from '../src-main/peers/session-token';
import {
  callSkill,
  closeAgents,
  getSession,
  http,
  sendBatch,
  sessionPayload,
  sleep,
  startPeerExpectingFailure,
  startPeerProcess,
  toolCall,
  type HttpAnswer,
  type PeerProcess,
  type SlotAnswer,
} from './support/peers';
import { makeTempDir, REPO_ROOT, requireBuild } from './support/serve-process';

const ITERATIONS = Math.max(1, Number.parseInt(process.env.MCPV2_TEST_ITERATIONS ?? '3', 10) || 3);
const SECRET = `e2e-shared-${randomBytes(12).toString('hex')}`;
const CUSTOM_SKILLS = join(REPO_ROOT, 'resources', 'skills', 'custom_skills.json');
const HOST_A = '127.0.0.1';
const HOST_B = '127.0.0.2';

let dataDir = '';
let scratchDir = '';
let A: PeerProcess;
let B: PeerProcess;
/** MCPV2_RATE_LIMIT=5: requests per second per session. */
let R1: PeerProcess;
/** MCPV2_SESSION_RATE_LIMIT=2, MCPV2_SESSION_TIMEOUT=1. */
let R2: PeerProcess;
const running: PeerProcess[] = [];

// ---- timings, printed at the end (for the report, and to keep the suite honest about speed) ----
const timings = new Map<string, number[]>();
async function timed<T>(category: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    timings.set(category, [...(timings.get(category) ?? []), performance.now() - started]);
  }
}

// ---- small helpers ----
function resultOf<T = Record<string, unknown>>(answer: SlotAnswer | undefined): T {
  if (!answer) throw new Error('no answer for this slot');
  if (answer.error) throw new Error(`expected a result, got error ${answer.error.code}: ${answer.error.message}`);
  return answer.result as T;
}
function errorOf(answer: SlotAnswer | undefined): { code: number; message: string } {
  if (!answer) throw new Error('no answer for this slot');
  if (!answer.error) throw new Error(`expected an error, got result ${JSON.stringify(answer.result).slice(0, 300)}`);
  return answer.error;
}
const words = (text: string) => text.split(/\s+/).filter(Boolean);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const rand = () => randomBytes(4).toString('hex');

/** A 401 with the protocol's -32001, the WWW-Authenticate challenge and the given reason. */
function expectRefusedSession(answer: HttpAnswer, reason: string | RegExp): void {
  expect(answer.status, answer.text).toBe(401);
  expect(answer.headers['www-authenticate']).toBe('Bearer');
  const body = answer.json as { error: { code: number; message: string } };
  expect(body.error.code).toBe(Mcpv2Error.InvalidSession);
  expect(body.error.message).toMatch(reason);
}

const PING = [toolCall(1, 'ping')];

/** GET /mcpv2/session, waiting out a 429 (Retry-After) a few times. */
async function patientSession(peer: PeerProcess, from = '127.0.0.1'): Promise<{ sessionId: string; expiresAt: number; ttl: number }> {
  for (let attempt = 0; ; attempt++) {
    const answer = await http(peer.origin, '/mcpv2/session', { from });
    if (answer.status === 200) return answer.json as { sessionId: string; expiresAt: number; ttl: number };
    if (answer.status !== 429 || attempt >= 5) throw new Error(`no session from ${peer.origin}: ${answer.status} ${answer.text}`);
    await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000);
  }
}

// A multi-block Claude history: two text blocks and a tool call in one assistant turn (the original
// adapter read only content[0]: docs/PEER-PROTOCOL.md, "Cross-provider history translation"), a
// tool result, and a final answer.
const CLAUDE_HISTORY = {
  system: 'You are a terse travel assistant.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Plan a day in Lisbon.' }, { type: 'text', text: 'Keep it under fifty words.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check the weather first.' },
        { type: 'text', text: 'One moment please.' },
        { type: 'tool_use', id: 'toolu_lisbon', name: 'get_weather', input: { city: 'Lisbon', units: 'metric' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_lisbon', content: '{"sky":"sunny","temp_c":24}' }] },
    { role: 'assistant', content: 'Sunny and 24 C: Belem in the morning, Alfama at sunset.' },
  ],
};
const HISTORY_MARKERS = ['terse travel assistant', 'Keep it under fifty words.', 'One moment please.', 'get_weather', 'Lisbon', 'sunny', 'Alfama at sunset'];
const PROVIDERS = ['claude', 'openai', 'gemini', 'deepseek'] as const;

beforeAll(async () => {
  requireBuild();
  dataDir = makeTempDir('mcpv2');
  scratchDir = makeTempDir('mcpv2-scratch');
  // One at a time: each `peer start` adds itself to the data dir's registry.
  A = await startPeerProcess({ dataDir, name: 'peer-a', publicIp: HOST_A, secret: SECRET });
  running.push(A);
  B = await startPeerProcess({ dataDir, name: 'peer-b', publicIp: HOST_B, secret: SECRET, llmMode: true, customSkills: CUSTOM_SKILLS });
  running.push(B);
  // The protocol's environment variables (docs/PEER-PROTOCOL.md) rather than flags, for the limit
  // peers.
  R1 = await startPeerProcess({ dataDir, name: 'peer-r1', env: { MCPV2_SECRET: SECRET, MCPV2_RATE_LIMIT: '5' } });
  running.push(R1);
  R2 = await startPeerProcess({ dataDir, name: 'peer-r2', env: { MCPV2_SECRET: SECRET, MCPV2_SESSION_RATE_LIMIT: '2', MCPV2_SESSION_TIMEOUT: '1' } });
  running.push(R2);
}, 60_000);

afterAll(async () => {
  for (const peer of running) peer.dispose();
  await Promise.all(running.map((p) => p.exited));
  await closeAgents();
  const rows = [...timings.entries()].map(([category, ms]) => {
    const total = ms.reduce((a, b) => a + b, 0);
    return `  ${category.padEnd(34)} runs ${String(ms.length).padStart(2)}  mean ${(total / ms.length).toFixed(0).padStart(6)} ms  max ${Math.max(...ms).toFixed(0).padStart(6)} ms`;
  });
  console.log(`mcpv2 scenario timings (${ITERATIONS} iterations):\n${rows.join('\n')}`);
  if (process.env.MCPV2_KEEP_DATA !== '1') {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratchDir, { recursive: true, force: true });
  }
});

for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
  describe(`iteration ${iteration} of ${ITERATIONS}`, () => {
    it('[01 health] both peers answer /mcpv2/health and the /health alias, and describe themselves', () =>
      timed('01 health', async () => {
        for (const [peer, id, llmMode] of [
          [A, 'peer-a', false],
          [B, 'peer-b', true],
        ] as const) {
          const health = await http(peer.origin, '/mcpv2/health');
          expect(health.status).toBe(200);
          const parsed = HealthSchema.parse(health.json);
          expect(parsed).toMatchObject({ status: 'ok', peerId: id, llmMode, protocolVersion: '2.0', mtls: false });
          const alias = await http(peer.origin, '/health');
          expect(alias.status).toBe(200);
          const { uptimeSeconds: _u1, activeSessions: _s1, ...stable } = parsed;
          const { uptimeSeconds: _u2, activeSessions: _s2, ...aliasStable } = HealthSchema.parse(alias.json);
          expect(aliasStable).toEqual(stable);
          const card = AgentCardSchema.parse((await http(peer.origin, '/mcpv2/agent-card')).json);
          expect(card.address).toBe(peer.address);
          expect(card.address).toBe(`mcpv2://${peer.host}:${peer.port}/mcpv2`);
          expect(card.capabilities).toMatchObject({ llmMode, batch: { maxSize: MAX_BATCH_SIZE } });
          expect(card.skills.map((s) => s.name)).toEqual(expect.arrayContaining(['ask', 'ping', 'upload_file', 'translate_history', 'pay']));
          expect(card.skills.some((s) => s.custom)).toBe(peer === B);
        }
      }));

    it('[02 session] a session is issued bound to the caller and works for several calls, by header and by ?sessionId=', () =>
      timed('02 session', async () => {
        const before = HealthSchema.parse((await http(A.origin, '/mcpv2/health')).json).activeSessions;
        const session = await getSession(A);
        const other = await getSession(A);
        expect(session.sessionId).not.toBe(other.sessionId);
        expect(session.ttl).toBe(3600);
        const payload = sessionPayload(session.sessionId);
        expect(payload).toMatchObject({ ip: '127.0.0.1', ttl: 3600 });
        expect(session.expiresAt).toBe(payload.issuedAt + payload.ttl);
        expect(Math.abs(payload.issuedAt - Date.now() / 1000)).toBeLessThan(5);
        // Reuse: the same token, five separate requests and one batch of three.
        for (let i = 0; i < 4; i++) expect(resultOf(await callSkill(A, session.sessionId, 'ping'))).toMatchObject({ pong: true });
        expect(resultOf(await callSkill(A, session.sessionId, 'ping', {}, { via: 'query' }))).toMatchObject({ pong: true });
        const batch = await sendBatch(A, session.sessionId, [toolCall('a', 'ping'), toolCall('b', 'ping'), toolCall('c', 'ping')]);
        expect((batch.json as SlotAnswer[]).map((s) => [s.id, (s.result as { pong: boolean }).pong])).toEqual([
          ['a', true],
          ['b', true],
          ['c', true],
        ]);
        const after = HealthSchema.parse((await http(A.origin, '/mcpv2/health')).json).activeSessions;
        expect(after).toBeGreaterThanOrEqual(before + 2);
      }));

    it('[03 tampered] any change to a session token is refused with 401', () =>
      timed('03 tampered', async () => {
        const { sessionId } = await getSession(A);
        const [encoded, mac] = sessionId.split('.') as [string, string];
        const payload = Buffer.from(encoded, 'base64url').toString('latin1');
        const reencode = (text: string) => `${Buffer.from(text, 'latin1').toString('base64url')}.${mac}`;
        const flipped = mac.slice(0, -1) + (mac.endsWith('0') ? '1' : '0');
        const tampered: Array<[string, string, RegExp]> = [
          ['last HMAC digit flipped', `${encoded}.${flipped}`, /bad-signature/],
          ['TTL stretched in the payload', reencode(payload.replace(/:3600$/, ':31536000')), /bad-signature/],
          ['IP rewritten in the payload', reencode(payload.replace(/^127\.0\.0\.1:/, '127.0.0.2:')), /bad-signature/],
          ['issued_at moved', reencode(payload.replace(/:(\d+):3600$/, (_m, t: string) => `:${Number(t) + 1}:3600`)), /bad-signature/],
          ['HMAC truncated', `${encoded}.${mac.slice(0, 40)}`, /malformed/],
          ['junk appended', `${sessionId}x`, /malformed/],
          ['HMAC upper-cased', `${encoded}.${mac.toUpperCase()}`, /malformed|bad-signature/],
          ['no token', '', /no session/],
        ];
        for (const [what, token, reason] of tampered) {
          const answer = token ? await sendBatch(A, token, PING) : await http(A.origin, '/mcpv2', { body: PING });
          expect(answer.status, what).toBe(401);
          expectRefusedSession(answer, reason);
        }
        // The untouched token still works: it was the tampering that was refused.
        expect(resultOf(await callSkill(A, sessionId, 'ping'))).toMatchObject({ pong: true });
      }));

    it('[04 expired] an expired session is refused with 401 (client-minted and peer-issued with MCPV2_SESSION_TIMEOUT=1)', () =>
      timed('04 expired', async () => {
        // Client-minted with the shared secret: one rule for every token (docs/PEER-PROTOCOL.md,
        // "Session token").
        const expired = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 1, now: Date.now() - 5_000 });
        for (const peer of [A, B]) expectRefusedSession(await sendBatch(peer, expired.sessionId, PING), /expired/);
        const live = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 60 });
        for (const peer of [A, B]) expect(resultOf(await callSkill(peer, live.sessionId, 'ping'))).toMatchObject({ pong: true });

        // Peer-issued with a 1 s TTL. issued_at is whole seconds, so a TTL-1 token lives from 0 to
        // 1 s depending on where in its second it was issued: ask just after a second starts
        // (again if a 429 wait moved us late into one) to have most of that second to use it in.
        let short = { sessionId: '', expiresAt: 0, ttl: 0 };
        for (let attempt = 0; attempt < 4 && Date.now() > short.expiresAt * 1000 - 300; attempt++) {
          await sleep(1000 - (Date.now() % 1000) + 20);
          short = await patientSession(R2);
        }
        expect(short.ttl).toBe(1);
        expect(sessionPayload(short.sessionId).ttl).toBe(1);
        expect(resultOf(await callSkill(R2, short.sessionId, 'ping'))).toMatchObject({ pong: true });
        await sleep(short.expiresAt * 1000 - Date.now() + 1_100);
        expectRefusedSession(await sendBatch(R2, short.sessionId, PING), /expired/);
      }));

    it('[05 future] a future-dated or forged session is refused with 401', () =>
      timed('05 future', async () => {
        const future = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 3600, now: Date.now() + 3_600_000 });
        expectRefusedSession(await sendBatch(A, future.sessionId, PING), /future/);
        // Within MCPV2_CLOCK_SKEW (300 s) a clock ahead of ours is tolerated (docs/PEER-PROTOCOL.md,
        // "Session token").
        const skewed = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 3600, now: Date.now() + 60_000 });
        expect(resultOf(await callSkill(A, skewed.sessionId, 'ping'))).toMatchObject({ pong: true });
        // Forged: well-formed, signed with another secret (a far-future one, and a present one).
        const forgedFuture = mintSession({ secret: 'not-the-secret', clientIp: '127.0.0.1', ttlSeconds: 3600, now: Date.now() + 3_600_000 });
        const forgedNow = mintSession({ secret: 'not-the-secret', clientIp: '127.0.0.1', ttlSeconds: 3600 });
        for (const token of [forgedFuture.sessionId, forgedNow.sessionId]) {
          expectRefusedSession(await sendBatch(A, token, PING), /bad-signature/);
          expectRefusedSession(await sendBatch(B, token, PING), /bad-signature/);
        }
        // A payload whose issued_at is past year 9999 is not a time at all.
        const absurd = `${Buffer.from(`127.0.0.1:${rand()}:999999999999:3600`).toString('base64url')}.${'0'.repeat(64)}`;
        expectRefusedSession(await sendBatch(A, absurd, PING), /malformed/);
      }));

    it('[06 ping] ping answers pong through the whole stack on both peers', () =>
      timed('06 ping', async () => {
        for (const [peer, name] of [
          [A, 'peer-a'],
          [B, 'peer-b'],
        ] as const) {
          const session = await getSession(peer);
          const pong = resultOf<{ pong: boolean; peer: string; time: string }>(await callSkill(peer, session.sessionId, 'ping'));
          expect(pong.pong).toBe(true);
          expect(pong.peer).toBe(name);
          expect(Math.abs(Date.parse(pong.time) - Date.now())).toBeLessThan(10_000);
        }
      }));

    it('[07 ask stateless] peer A answers each ask on its own, with no memory', () =>
      timed('07 ask stateless', async () => {
        const { sessionId } = await getSession(A);
        const first = resultOf<{ response: string; turn?: number; conversation?: string }>(await callSkill(A, sessionId, 'ask', { query: 'My name is Ada. Remember it.' }));
        expect(first.response).toBe('[local model] Summary: My name is Ada.');
        const conversation = `stateless-${rand()}`;
        for (const context of [undefined, { conversation }]) {
          const second = resultOf<{ response: string; turn?: number; conversation?: string }>(
            await callSkill(A, sessionId, 'ask', { query: 'What is my name?' }, context ? { context } : {}),
          );
          expect(second.response).toBe('[local model] Summary: What is my name?');
          expect(second.turn).toBeUndefined();
          expect(second.conversation).toBeUndefined();
        }
      }));

    it('[08 ask llm-mode] two independent agents hold a 4-turn conversation on peer B; context carries turn over turn; another conversation sees none of it', () =>
      timed('08 ask llm-mode', async () => {
        // Two agents: separate sessions from separate source addresses, one shared conversation.
        const alice = { from: '127.0.0.1', session: (await getSession(B, '127.0.0.1')).sessionId };
        const bob = { from: '127.0.0.2', session: (await getSession(B, '127.0.0.2')).sessionId };
        const conversation = `trip-${iteration}-${rand()}`;
        const turns = [
          { agent: alice, query: 'My name is Ada and I plan a trip to Lisbon in May.' },
          { agent: bob, query: 'Bob here. What should Ada pack for the trip?' },
          { agent: alice, query: 'Ada again. Which day suits the old town best?' },
          { agent: bob, query: 'Bob again. Please sum up the plan so far.' },
        ];
        const remembered = words(turns[0]!.query).slice(0, 8).join(' ');
        const transcript: string[] = [];
        for (const [index, { agent, query }] of turns.entries()) {
          const answer = resultOf<{ response: string; turn: number; conversation: string; usage: { inputTokens: number } }>(
            await callSkill(B, agent.session, 'ask', { query }, { from: agent.from, context: { conversation } }),
          );
          expect(answer.turn).toBe(index + 1);
          expect(answer.conversation).toBe(conversation);
          if (index === 0) expect(answer.response).not.toContain('(turn');
          else expect(answer.response).toContain(`(turn ${index + 1}; earlier: ${remembered})`);
          // The model was sent every earlier question and answer, plus this question.
          expect(answer.usage.inputTokens).toBe(words([...transcript, query].join(' ')).length);
          transcript.push(query, answer.response);
        }

        // A second conversation (its own key, a third agent) starts from nothing and remembers only itself.
        const carol = (await getSession(B, '127.0.0.1')).sessionId;
        const other = `other-${iteration}-${rand()}`;
        const first = resultOf<{ response: string; turn: number }>(await callSkill(B, carol, 'ask', { query: 'I am Carol, going to Oslo.' }, { context: { conversation: other } }));
        expect(first.turn).toBe(1);
        expect(first.response).toBe('[local model] Summary: I am Carol, going to Oslo.');
        const second = resultOf<{ response: string; turn: number }>(await callSkill(B, carol, 'ask', { query: 'Where am I going?' }, { context: { conversation: other } }));
        expect(second.turn).toBe(2);
        expect(second.response).toContain('(turn 2; earlier: I am Carol, going to Oslo.)');
        expect(second.response).not.toMatch(/Ada|Lisbon/);
        // And a session's default conversation (no key) is its own.
        const dave = (await getSession(B, '127.0.0.1')).sessionId;
        const own = resultOf<{ response: string; turn: number; conversation: string }>(await callSkill(B, dave, 'ask', { query: 'Hello there.' }));
        expect(own.turn).toBe(1);
        expect(own.conversation).toMatch(/^session:sess_[0-9a-f]{12}$/);
      }));

    it('[09 files] upload -> list -> process -> delete at 1 B, ~100 KB and ~5 MB; not-found is -32007; traversal is refused and writes nothing outside the store', () =>
      timed('09 files', async () => {
        const store = join(dataDir, 'peers', 'peer-b', 'files');
        const { sessionId } = await getSession(B);
        const tag = `${iteration}-${rand()}`;
        const sizes: Array<[string, Buffer, 'utf8' | 'base64']> = [
          [`one-${tag}.txt`, Buffer.from('x'), 'utf8'],
          [`hundred-kb-${tag}.md`, Buffer.from('A line of notes about the trip to Lisbon.\n'.repeat(2_500)), 'utf8'],
          [`five-mb-${tag}.bin`, randomBytes(5 * 1024 * 1024), 'base64'],
        ];
        for (const [filename, content, encoding] of sizes) {
          // Twice: the second upload replaces the first atomically.
          for (let round = 0; round < 2; round++) {
            const uploaded = resultOf<{ filename: string; bytes: number }>(
              await callSkill(B, sessionId, 'upload_file', { filename, content: content.toString(encoding), encoding }),
            );
            // The journal keeps the digest and size of an upload, never its bytes.
            expect(uploaded).toEqual({ filename, bytes: content.length, sha256: createHash('sha256').update(content).digest('hex') });
          }
          // The bytes on disk are exactly the bytes sent, in the store (an absolute path).
          expect(sha256(readFileSync(join(store, filename)))).toBe(sha256(content));
          const listed = resultOf<{ files: Array<{ filename: string; bytes: number }> }>(await callSkill(B, sessionId, 'list_files'));
          expect(listed.files.find((f) => f.filename === filename)).toMatchObject({ filename, bytes: content.length });
          const processed = resultOf<{ filename: string; bytes: number; result: string }>(
            await callSkill(B, sessionId, 'process_instructions', { filename, instructions: 'Summarise this file.' }),
          );
          expect(processed).toMatchObject({ filename, bytes: content.length, result: '[local model] Summary: Summarise this file.' });
          expect(resultOf(await callSkill(B, sessionId, 'delete_file', { filename }))).toEqual({ deleted: filename });
          expect(existsSync(join(store, filename))).toBe(false);
          const relisted = resultOf<{ files: Array<{ filename: string }> }>(await callSkill(B, sessionId, 'list_files'));
          expect(relisted.files.map((f) => f.filename)).not.toContain(filename);
        }

        const missing = `missing-${tag}.txt`;
        for (const [skill, args] of [
          ['process_instructions', { filename: missing, instructions: 'Read it.' }],
          ['delete_file', { filename: missing }],
        ] as const) {
          expect(errorOf(await callSkill(B, sessionId, skill, args)).code).toBe(Mcpv2Error.FileNotFound);
        }

        // Traversal: a sentinel beside the store must survive, and no escape name may appear anywhere.
        const sentinel = join(store, '..', `sentinel-${tag}.txt`);
        writeFileSync(sentinel, 'keep me');
        const escape = `escape-${tag}.txt`;
        const hostile = [
          `../${escape}`,
          `%2e%2e%2f${escape}`,
          `..%2f${escape}`,
          `..\\${escape}`,
          `....//${escape}`,
          join(tmpdir(), escape),
          `/etc/${escape}`,
          `C:\\${escape}`,
          `${escape}\u0000.png`,
          '..',
          '.',
        ];
        for (const peer of [A, B]) {
          const token = peer === B ? sessionId : (await getSession(A)).sessionId;
          for (const filename of hostile) {
            expect(errorOf(await callSkill(peer, token, 'upload_file', { filename, content: 'owned' })).code, filename).toBe(Mcpv2Error.InvalidParams);
            expect(errorOf(await callSkill(peer, token, 'process_instructions', { filename, instructions: 'Read it.' })).code, filename).toBe(Mcpv2Error.InvalidParams);
          }
          for (const filename of [`../sentinel-${tag}.txt`, `%2e%2e%2fsentinel-${tag}.txt`, `..\\sentinel-${tag}.txt`, sentinel]) {
            expect(errorOf(await callSkill(peer, token, 'delete_file', { filename })).code, filename).toBe(Mcpv2Error.InvalidParams);
          }
        }
        expect(readFileSync(sentinel, 'utf8')).toBe('keep me');
        const escaped = [join(store, '..', escape), join(store, '..', '..', escape), join(dataDir, escape), join(tmpdir(), escape), join(REPO_ROOT, escape), join('/etc', escape)];
        for (const path of escaped) expect(existsSync(path), path).toBe(false);
        for (const peerId of ['peer-a', 'peer-b']) {
          const dir = join(dataDir, 'peers', peerId, 'files');
          if (existsSync(dir)) expect(readdirSync(dir).filter((name) => name.includes(tag))).toEqual([]);
        }
        rmSync(sentinel);
      }));

    it('[10 translate_history] all 12 ordered provider pairs translate a multi-block history, and each A -> B -> A round trip gives A back', () =>
      timed('10 translate_history', async () => {
        const { sessionId } = await getSession(B);
        // Each provider's native form of the same history, as the peer writes it.
        const natives = await sendBatch(
          B,
          sessionId,
          PROVIDERS.map((to) => toolCall(`claude->${to}`, 'translate_history', { from: 'claude', to, messages: CLAUDE_HISTORY })),
        );
        const native = Object.fromEntries(PROVIDERS.map((p, i) => [p, resultOf<{ messages: unknown }>((natives.json as SlotAnswer[])[i]).messages])) as Record<string, unknown>;
        const pairs = PROVIDERS.flatMap((from) => PROVIDERS.filter((to) => to !== from).map((to) => [from, to] as const));
        expect(pairs).toHaveLength(12);
        const forward = (await sendBatch(
          B,
          sessionId,
          pairs.map(([from, to]) => toolCall(`${from}->${to}`, 'translate_history', { from, to, messages: native[from] })),
        )).json as SlotAnswer[];
        expect(forward.map((s) => s.id)).toEqual(pairs.map(([from, to]) => `${from}->${to}`));
        const back = (await sendBatch(
          B,
          sessionId,
          pairs.map(([from, to], i) => toolCall(`${to}->${from}`, 'translate_history', { from: to, to: from, messages: resultOf<{ messages: unknown }>(forward[i]).messages })),
        )).json as SlotAnswer[];
        for (const [i, [from, to]] of pairs.entries()) {
          const there = resultOf<{ from: string; to: string; messages: unknown }>(forward[i]);
          expect(there.from).toBe(from);
          expect(there.to).toBe(to);
          const text = JSON.stringify(there.messages);
          // Every block of the multi-block turn survived, not just the first.
          for (const marker of HISTORY_MARKERS) expect(text, `${from}->${to} lost "${marker}"`).toContain(marker);
          expect(resultOf<{ messages: unknown }>(back[i]).messages, `${from}->${to}->${from}`).toEqual(native[from]);
        }
      }));

    it('[11 negotiate] a common version is agreed; no common version is -32006', () =>
      timed('11 negotiate', async () => {
        const { sessionId } = await getSession(A);
        const agreed = resultOf<{ version: string; capabilities: string[]; supported: string[] }>(
          await callSkill(A, sessionId, 'negotiate', { versions: ['9.0', '2.0', '1.0'], capabilities: ['batch', 'files', 'teleport'] }),
        );
        expect(agreed.version).toBe('2.0');
        expect(agreed.capabilities).toEqual(['batch', 'files']);
        expect(agreed.supported).not.toContain('llm-mode');
        const onB = resultOf<{ supported: string[] }>(await callSkill(B, (await getSession(B)).sessionId, 'negotiate', { versions: ['2.0'] }));
        expect(onB.supported).toContain('llm-mode');
        const mismatch = errorOf(await callSkill(A, sessionId, 'negotiate', { versions: ['0.9', '3.0'] }));
        expect(mismatch.code).toBe(Mcpv2Error.ProtocolVersionMismatch);
        expect(mismatch.message).toContain('2.0');
      }));

    it('[12 pay] pay waits for a person and moves no money', () =>
      timed('12 pay', async () => {
        const { sessionId } = await getSession(A);
        const paid = resultOf<{ status: string; transaction_id: string; moved: boolean; runId: string; reason: string }>(await callSkill(A, sessionId, 'pay', { amount: 12.5, currency: 'EUR', payee: 'vendor-1' }));
        expect(paid).toMatchObject({ status: 'pending', transaction_id: `not-a-payment-${paid.runId}`, approval: 'pending-approval', moved: false, reason: 'payment' });
        expect(paid.runId).toMatch(/^run-/);
        expect(errorOf(await callSkill(A, sessionId, 'pay', { amount: 1, currency: 'euros', payee: 'vendor-1' })).code).toBe(Mcpv2Error.InvalidParams);
        expect(errorOf(await callSkill(A, sessionId, 'pay', { amount: -5, currency: 'EUR', payee: 'vendor-1' })).code).toBe(Mcpv2Error.InvalidParams);
      }));

    it('[13 unsupported provider] translate_history and /mcpv2/ai/{provider} answer -32010 for llama', () =>
      timed('13 unsupported provider', async () => {
        const { sessionId } = await getSession(A);
        for (const args of [
          { from: 'llama', to: 'claude', messages: [] },
          { from: 'claude', to: 'llama', messages: CLAUDE_HISTORY },
        ]) {
          const refused = errorOf(await callSkill(A, sessionId, 'translate_history', args));
          expect(refused.code).toBe(Mcpv2Error.UnsupportedProvider);
          expect(refused.message).toMatch(/llama/);
        }
        const native = await http(A.origin, '/mcpv2/ai/llama', { body: { messages: [{ role: 'user', content: 'hi' }] }, headers: { authorization: `Bearer ${sessionId}` } });
        expect(native.status).toBe(404);
        expect((native.json as { error: { code: number } }).error.code).toBe(Mcpv2Error.UnsupportedProvider);
        // The session is checked first: without one it is a 401, whatever the provider.
        expectRefusedSession(await http(A.origin, '/mcpv2/ai/llama', { body: { messages: [] } }), /no session/);
      }));

    it('[13b ai native] /mcpv2/ai/{provider} answers in each provider\'s native response shape', () =>
      timed('13b ai native', async () => {
        const { sessionId } = await getSession(A);
        const post = (provider: string, body: unknown) => http(A.origin, `/mcpv2/ai/${provider}`, { body, headers: { authorization: `Bearer ${sessionId}` } });
        const claude = await post('claude', { model: 'any', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Name a city in Portugal.' }] }] });
        expect(claude.status, claude.text).toBe(200);
        expect(claude.json).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: '[local model] Summary: Name a city in Portugal.' }], stop_reason: 'end_turn', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
        for (const provider of ['openai', 'deepseek']) {
          const answer = await post(provider, { model: 'any', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Name a city in Portugal.' }] });
          expect(answer.status, answer.text).toBe(200);
          expect(answer.json).toMatchObject({
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: '[local model] Summary: Name a city in Portugal.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
          });
        }
        const gemini = await post('gemini', { contents: [{ role: 'user', parts: [{ text: 'Name a city in Portugal.' }] }], generationConfig: { maxOutputTokens: 3 } });
        expect(gemini.status, gemini.text).toBe(200);
        expect(gemini.json).toMatchObject({
          candidates: [{ content: { role: 'model', parts: [{ text: '[local model] Summary:' }] }, finishReason: 'MAX_TOKENS', index: 0 }],
          usageMetadata: { promptTokenCount: expect.any(Number), candidatesTokenCount: 3 },
        });
        expectRefusedSession(await http(A.origin, '/mcpv2/ai/openai', { body: { messages: [{ role: 'user', content: 'hi' }] } }), /no session/);
      }));

    it('[14 unknown method] an unknown method is -32601 and an unknown skill -32002', () =>
      timed('14 unknown method', async () => {
        const { sessionId } = await getSession(A);
        const answer = await sendBatch(A, sessionId, [
          { jsonrpc: '2.0', id: 'm', method: 'tools/teleport', params: {} },
          toolCall('s', 'teleport'),
        ]);
        const [method, skill] = answer.json as SlotAnswer[];
        expect(method).toMatchObject({ id: 'm', error: { code: Mcpv2Error.MethodNotFound } });
        expect(skill).toMatchObject({ id: 's', error: { code: Mcpv2Error.SkillNotFound } });
      }));

    it('[15 rate limits] a burst on one session gets 429 / -32005 (MCPV2_RATE_LIMIT); a burst of session requests does too (MCPV2_SESSION_RATE_LIMIT)', () =>
      timed('15 rate limits', async () => {
        const { sessionId } = await patientSession(R1);
        const burst = await Promise.all(Array.from({ length: 25 }, () => sendBatch(R1, sessionId, PING)));
        const limited = burst.filter((a) => a.status === 429);
        expect(burst.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
        expect(limited.length).toBeGreaterThanOrEqual(10);
        for (const answer of limited) {
          expect((answer.json as { error: { code: number } }).error.code).toBe(Mcpv2Error.RateLimited);
          expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        }
        // The limit is per session: another session is not held up by this one's burst.
        const other = await patientSession(R1);
        expect(resultOf(await callSkill(R1, other.sessionId, 'ping'))).toMatchObject({ pong: true });
        // And after Retry-After the first one works again.
        await sleep(Number(limited[0]!.headers['retry-after']) * 1000);
        expect(resultOf(await callSkill(R1, sessionId, 'ping'))).toMatchObject({ pong: true });

        const sessions = await Promise.all(Array.from({ length: 10 }, () => http(R2.origin, '/mcpv2/session')));
        const refused = sessions.filter((a) => a.status === 429);
        expect(sessions.some((a) => a.status === 200)).toBe(true);
        expect(refused.length).toBeGreaterThanOrEqual(5);
        for (const answer of refused) {
          expect((answer.json as { error: { code: number } }).error.code).toBe(Mcpv2Error.RateLimited);
          expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        }
      }));

    it('[16 custom skills] peer B serves the template and the script skill from custom_skills.json; peer A has neither', () =>
      timed('16 custom skills', async () => {
        const { sessionId } = await getSession(B);
        const listed = await sendBatch(B, sessionId, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
        const tools = ((listed.json as SlotAnswer[])[0]!.result as { tools: Array<{ name: string; custom: boolean }> }).tools;
        expect(tools.filter((t) => t.custom).map((t) => t.name)).toEqual(['greet', 'word_stats']);
        expect(resultOf(await callSkill(B, sessionId, 'greet', { name: 'Ada' }))).toEqual({ greeting: 'Hello, Ada!', name: 'Ada', kind: 'template' });
        const stats = resultOf(await callSkill(B, sessionId, 'word_stats', { text: 'the quick brown fox jumps over the extraordinarily lazy dog' }));
        expect(stats).toEqual({ words: 10, characters: 59, longest: 'extraordinarily', kind: 'script' });
        // Arguments are checked against the skill's inputSchema.
        expect(errorOf(await callSkill(B, sessionId, 'greet', { name: '' })).code).toBe(Mcpv2Error.InvalidParams);
        expect(errorOf(await callSkill(B, sessionId, 'word_stats', { text: 42 })).code).toBe(Mcpv2Error.InvalidParams);
        // get_skill describes, never runs.
        const described = resultOf<Record<string, unknown>>(await callSkill(B, sessionId, 'get_skill', { name: 'word_stats' }));
        expect(described).toMatchObject({ name: 'word_stats', custom: true });
        expect(described).not.toHaveProperty('words');
        expect(errorOf(await callSkill(A, (await getSession(A)).sessionId, 'greet', { name: 'Ada' })).code).toBe(Mcpv2Error.SkillNotFound);
      }));

    it('[17 mixed batch] one batch of successes and failures: each slot is answered on its own, in order', () =>
      timed('17 mixed batch', async () => {
        const { sessionId } = await getSession(B);
        const alone = resultOf(await callSkill(B, sessionId, 'greet', { name: 'Grace' }));
        const answer = await sendBatch(B, sessionId, [
          toolCall('fail-1', 'no_such_skill'),
          toolCall('ok-1', 'greet', { name: 'Grace' }),
          { jsonrpc: '2.0', method: 'tools/call', params: { name: 'ping', arguments: {} } },
          toolCall('fail-2', 'negotiate', { versions: ['7.0'] }),
          toolCall('ok-2', 'ping'),
          { jsonrpc: '1.0', id: 'fail-3', method: 'tools/call' },
          toolCall('fail-4', 'process_instructions', { filename: `nope-${rand()}.txt`, instructions: 'x' }),
          toolCall('ok-3', 'word_stats', { text: 'one two' }),
        ]);
        expect(answer.status).toBe(200);
        const slots = answer.json as SlotAnswer[];
        expect(slots.map((s) => s.id)).toEqual(['fail-1', 'ok-1', 'fail-2', 'ok-2', 'fail-3', 'fail-4', 'ok-3']);
        expect(errorOf(slots[0]).code).toBe(Mcpv2Error.SkillNotFound);
        expect(resultOf(slots[1])).toEqual(alone);
        expect(errorOf(slots[2]).code).toBe(Mcpv2Error.ProtocolVersionMismatch);
        expect(resultOf(slots[3])).toMatchObject({ pong: true });
        expect(errorOf(slots[4]).code).toBe(Mcpv2Error.InvalidRequest);
        expect(errorOf(slots[5]).code).toBe(Mcpv2Error.FileNotFound);
        expect(resultOf(slots[6])).toMatchObject({ words: 2 });
      }));
  });
}

describe('once', () => {
  it('sessions are bound to the caller\'s IP: a token from 127.0.0.1 replayed from 127.0.0.2 is refused', () =>
    timed('ip-bound sessions', async () => {
      const fromA = await getSession(A, '127.0.0.1');
      expect(sessionPayload(fromA.sessionId).ip).toBe('127.0.0.1');
      expectRefusedSession(await sendBatch(B, fromA.sessionId, PING, { from: '127.0.0.2' }), /wrong-ip/);
      expectRefusedSession(await sendBatch(A, fromA.sessionId, PING, { from: '127.0.0.2' }), /wrong-ip/);
      // The shared-secret trust model (docs/PEER-PROTOCOL.md, "Security model"): the token names a
      // caller IP, not a peer. Any peer holding the shared secret accepts it from that IP (identity
      // mode is the answer to this).
      expect(resultOf(await callSkill(B, fromA.sessionId, 'ping', {}, { from: '127.0.0.1' }))).toMatchObject({ pong: true });

      const fromB = await getSession(B, '127.0.0.2');
      expect(sessionPayload(fromB.sessionId).ip).toBe('127.0.0.2');
      expect(resultOf(await callSkill(B, fromB.sessionId, 'ping', {}, { from: '127.0.0.2' }))).toMatchObject({ pong: true });
      expectRefusedSession(await sendBatch(B, fromB.sessionId, PING, { from: '127.0.0.1' }), /wrong-ip/);
      expectRefusedSession(await sendBatch(A, fromB.sessionId, PING, { from: '127.0.0.1' }), /wrong-ip/);

      // The printed demo sessions are valid only from the peer's own address.
      expect(B.demoSessionId, 'peer B printed no MCPV2_DEMO_SESSION_ADDRESS').not.toBe('');
      expect(sessionPayload(B.demoSessionId).ip).toBe(HOST_B);
      expect(resultOf(await callSkill(B, B.demoSessionId, 'ping', {}, { from: HOST_B }))).toMatchObject({ pong: true });
      expectRefusedSession(await sendBatch(B, B.demoSessionId, PING, { from: HOST_A }), /wrong-ip/);
      expect(resultOf(await callSkill(A, A.demoSessionId, 'ping', {}, { from: HOST_A }))).toMatchObject({ pong: true });
    }));

  it('binding: a busy port fails fast naming the port; --port-fallback scans forward and prints the real port; a non-local --public-ip fails with the fix', () =>
    timed('binding', async () => {
      const busy = await startPeerExpectingFailure({ dataDir: scratchDir, name: 'busy', port: A.port, secret: SECRET });
      expect(busy.code).toBe(1);
      expect(busy.output).toContain(`port ${A.port} on 127.0.0.1 is already in use`);
      expect(busy.output).toContain('--port-fallback');
      expect(busy.output).not.toContain('MCPV2_BOUND_PORT=');
      expect(busy.elapsedMs).toBeLessThan(5_000);

      const portFile = join(scratchDir, 'fallback.port');
      const moved = await startPeerProcess({ dataDir: scratchDir, name: 'fallback', port: A.port, portFallback: true, portFile, secret: SECRET });
      running.push(moved);
      expect(moved.port).toBeGreaterThan(A.port);
      expect(moved.port).toBeLessThanOrEqual(A.port + 100);
      expect(readFileSync(portFile, 'utf8').trim()).toBe(String(moved.port));
      expect(moved.address).toBe(`mcpv2://127.0.0.1:${moved.port}/mcpv2`);
      expect(HealthSchema.parse((await http(moved.origin, '/mcpv2/health')).json).peerId).toBe('fallback');
      expect(await moved.stop()).toEqual({ code: 0, signal: null });

      // 192.0.2.10 is TEST-NET-1: never on a local interface, and no traffic is ever sent to it.
      const far = await startPeerExpectingFailure({ dataDir: scratchDir, name: 'far', publicIp: '192.0.2.10', secret: SECRET });
      expect(far.code).toBe(1);
      expect(far.output).toContain('cannot bind 192.0.2.10: that address is not on a local interface');
      expect(far.output).toContain('--bind-host 0.0.0.0');
      expect(far.elapsedMs).toBeLessThan(5_000);
    }));

  it('a malformed custom skills file makes the peer refuse to start with a message naming the file and the field', () =>
    timed('malformed custom skills', async () => {
      const cases: Array<[string, string, string]> = [
        ['not-json.json', '{"skills": [', 'not valid JSON'],
        ['no-description.json', JSON.stringify({ skills: [{ name: 'x', response: 'y' }] }), 'skills.0.description'],
        ['both-kinds.json', JSON.stringify({ skills: [{ name: 'x', description: 'd', response: 'y', script: 'return 1' }] }), 'exactly one of response or script'],
        ['clash.json', JSON.stringify({ skills: [{ name: 'ping', description: 'd', response: 'pong' }] }), 'skills.0.name: ping is a built-in skill'],
      ];
      await Promise.all(
        cases.map(async ([file, content, expected], index) => {
          const path = join(scratchDir, file);
          writeFileSync(path, content);
          const refused = await startPeerExpectingFailure({ dataDir: join(scratchDir, `skills-${index}`), name: `bad-skills-${index}`, customSkills: path, secret: SECRET });
          expect(refused.code, refused.output).toBe(1);
          expect(refused.output).toContain(`custom skills file ${path}`);
          expect(refused.output).toContain(expected);
          expect(refused.output).not.toContain('MCPV2_BOUND_PORT=');
        }),
      );
    }));

  it('identity mode: X may ping Y and nothing else; a credential for Z is refused by Y; revoking X takes effect without restarting Y', () =>
    timed('identity mode', async () => {
      const registry = new PeerRegistry(dataDir);
      registry.create({ id: 'x', port: 0, auth: 'identity' });
      registry.create({ id: 'y', port: 0, auth: 'identity' });
      registry.create({ id: 'z', port: 0, auth: 'identity' });
      registry.allow('y', 'x', ['ping']);
      const Y = await startPeerProcess({ dataDir, peerId: 'y' });
      running.push(Y);
      const card = AgentCardSchema.parse((await http(Y.origin, '/mcpv2/agent-card')).json);
      expect(card.capabilities.auth).toEqual(['peer-credential']);
      expect(card.identity).toEqual(registry.get('y')!.publicKey);

      const client = Mcpv2Client.at(Y.address);
      const asX = { credential: await mintPeerCredential(registry, 'x', 'y'), audience: 'peer:y' };
      expect(await client.callTool('ping', {}, { auth: asX })).toMatchObject({ pong: true, peer: 'y' });
      await expect(client.callTool('ask', { query: 'hi' }, { auth: asX })).rejects.toMatchObject({ code: Mcpv2Error.CapabilityViolation });
      // /ai is ask's provider-native face: refused too.
      const native = await http(Y.origin, '/mcpv2/ai/openai', { body: { messages: [{ role: 'user', content: 'hi' }] }, headers: { authorization: `Bearer ${asX.credential.presentTo('peer:y')}` } });
      expect(native.status).toBe(403);
      expect((native.json as { error: { code: number } }).error.code).toBe(Mcpv2Error.CapabilityViolation);
      // Z has no grant on Y at all.
      const asZ = { credential: await mintPeerCredential(registry, 'z', 'y'), audience: 'peer:y' };
      await expect(client.callTool('ping', {}, { auth: asZ })).rejects.toMatchObject({ code: Mcpv2Error.CapabilityViolation });

      // A credential X minted for Z, presented to Y: the audience is wrong.
      const forZ = await mintPeerCredential(registry, 'x', 'z');
      expect(() => forZ.presentTo('peer:y')).toThrow(/cannot be presented to peer:y/);
      expectRefusedSession(await sendBatch(Y, forZ.presentTo('peer:z'), PING), /minted for another peer/);
      // Identity mode takes no shared-secret sessions.
      expect((await http(Y.origin, '/mcpv2/session')).status).toBe(404);
      const shared = mintSession({ secret: registry.secretOf('y'), clientIp: '127.0.0.1', ttlSeconds: 60 });
      expectRefusedSession(await sendBatch(Y, shared.sessionId, PING), /peer credentials only/);

      // Revocation in the registry reaches the running Y on its next call.
      registry.revoke('x');
      await expect(client.callTool('ping', {}, { auth: asX })).rejects.toBeInstanceOf(PeerClientError);
      expectRefusedSession(await sendBatch(Y, asX.credential.presentTo('peer:y'), PING), /revoked/);
      const fresh = await mintPeerCredential(registry, 'x', 'y');
      expectRefusedSession(await sendBatch(Y, fresh.presentTo('peer:y'), PING), /revoked/);
      expect(Y.child.exitCode).toBeNull();
    }));
});
