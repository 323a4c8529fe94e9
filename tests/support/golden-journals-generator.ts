/**
 * Makes the golden journals (tests/fixtures/journals/README.md) with this build's own code: for
 * each kind of run, a real plane on a fresh data dir runs it (the local model, a demo peer
 * process, an MCP server over stdio, an A2A agent over HTTP, an ACP agent behind the tap), the
 * whole journal is exported as a bundle, and the views the live plane shows of its runs are
 * written beside it. Run by scripts/golden-journals.mjs:
 *
 *   node --import tsx scripts/golden-journals.mjs [--out DIR] [--only KIND] [--tag TAG]
 *
 * It never overwrites a golden journal: an old one is kept as it was made.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { exportBundle } from '../../src-main/journal/bundle-export';
import { Journal } from '../../src-main/journal/journal';
import { KEY_RETIRED } from '../../src-main/journal/keyring';
import type { Plane } from '../../src-main/plane/plane';
import { createNetguard, staticAllowList } from '../../src-main/net/netguard';
import { createA2aClient } from '../../src-main/protocols/a2a/client/a2a-client';
import { writeMcpServersFile } from '../../src-main/protocols/mcp/client/mcp-servers-file';
import { startTap } from '../../src-main/protocols/acp/acp-tap';
import { PlaneSink } from '../../src-main/protocols/acp/observation-sink';
import type { RecordMode } from '../../src-shared/protocol/acp/evidence';
import { misbehavingStdio } from '../doubles/everything-server';
import { startSdkRemote } from '../doubles/sdk-a2a-remote';
import { FAKE_AGENT } from '../helpers/acp-tap-process';
import { tempDataDir } from './journal-support';
import { call, clientOf, failure, testPlane } from './runtime-support';
import { GOLDEN_DIR, GOLDEN_KINDS, readBundle, runsOf, agentsOf, type GoldenKind, type GoldenViews } from './golden-journals';

/** The agents the golden runs run: small, and each kept in the view file beside its bundle. */
const MANIFESTS = {
  summarize: {
    name: 'summarize',
    description: 'Summarise a text with the local deterministic model.',
    input: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', minLength: 1, maxLength: 20000 } } },
    steps: [{ as: 'summary', model: { provider: 'local', system: 'You write one-paragraph summaries.', prompt: 'Summarise: {{input.text}}', maxTokens: 64 } }, { output: { summary: '{{steps.summary.text}}', tokens: '{{steps.summary.usage}}' } }],
    grants: [{ kind: 'model', name: 'local' }],
    budget: { maxEffects: 5, maxTokens: 4000 },
  },
  askPeer: {
    name: 'ask-peer',
    description: 'Ask the demo peer beta a question over MCPv2.',
    input: { type: 'object', required: ['query'], additionalProperties: false, properties: { query: { type: 'string', minLength: 1, maxLength: 4000 } } },
    steps: [{ as: 'answer', peer: { name: 'beta', skill: 'ask', args: { query: '{{input.query}}' } } }, { output: '{{steps.answer}}' }],
    grants: [{ kind: 'peer', name: 'beta', skills: ['ask'] }],
    budget: { maxEffects: 3 },
  },
  approveEcho: {
    name: 'approve-echo',
    description: 'Draft a line with the local model, then echo it once a person approves.',
    input: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' } } },
    steps: [
      { as: 'draft', model: { provider: 'local', prompt: 'Write one line about {{input.topic}}', maxTokens: 30 } },
      { as: 'echoed', tool: { name: 'echo', args: { line: '{{steps.draft.text}}' } } },
      { output: '{{steps.echoed}}' },
    ],
    grants: [
      { kind: 'model', name: 'local' },
      { kind: 'tool', name: 'echo', approve: true },
    ],
    budget: { maxEffects: 5 },
  },
  mcpEcho: {
    name: 'mcp-echo',
    description: 'Echo a text through an MCP server.',
    input: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    steps: [{ as: 'echoed', mcp: { server: 'local', tool: 'echo', args: { message: '{{input.text}}' } } }, { output: '{{steps.echoed}}' }],
    grants: [{ kind: 'mcp', name: 'local/echo' }],
  },
  thrifty: {
    name: 'thrifty',
    description: 'Three drafts under a 60-token ceiling.',
    input: { type: 'object', required: ['topic'], additionalProperties: false, properties: { topic: { type: 'string', minLength: 1, maxLength: 500 } } },
    steps: [
      { as: 'first', model: { provider: 'local', prompt: 'First draft about {{input.topic}}', maxTokens: 40 } },
      { as: 'second', model: { provider: 'local', prompt: 'Second draft, improving: {{steps.first.text}}', maxTokens: 40 } },
      { as: 'third', model: { provider: 'local', prompt: 'Final draft, improving: {{steps.second.text}}', maxTokens: 40 } },
      { output: '{{steps.third.text}}' },
    ],
    grants: [{ kind: 'model', name: 'local' }],
    budget: { maxTokens: 60 },
  },
  payFromModel: {
    name: 'pay-from-model',
    description: "Pay 12 USD to the vendor a model's answer names: the payee is the model's, so a person is asked where it came from.",
    input: { type: 'object' },
    steps: [
      { as: 'vendor', model: { provider: 'local', prompt: 'Name a vendor', maxTokens: 4 } },
      { as: 'payment', pay: { amount: 12, currency: 'USD', payee: '{{steps.vendor.text}}' } },
      { output: '{{steps.payment}}' },
    ],
    grants: [
      { kind: 'model', name: 'local' },
      { kind: 'payment', name: 'request', approve: true },
    ],
  },
  writeWhereTold: {
    name: 'write-where-told',
    description: "Write to the path a model's answer names, under a grant that refuses any path but the operator's.",
    input: { type: 'object' },
    steps: [
      { as: 'where', model: { provider: 'local', prompt: 'Name a file', maxTokens: 4 } },
      { tool: { name: 'file.write', args: { path: '{{steps.where.text}}', content: 'golden' } } },
      { output: 'written' },
    ],
    grants: [
      { kind: 'model', name: 'local' },
      { kind: 'tool', name: 'file.write', protect: { path: { accept: ['operator', 'plane'], otherwise: 'refuse' } } },
    ],
  },
} satisfies Record<string, Record<string, unknown>>;

/** An A2A caller's agent, its card's URL known only once the remote listens. */
function a2aCaller(card: string): Record<string, unknown> {
  return {
    name: 'a2a-caller',
    description: 'Ask a remote A2A agent to echo a text.',
    input: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card, skill: 'echo', message: { said: '{{input.text}}' } } }, { output: '{{steps.remote.value}}' }],
    grants: [{ kind: 'a2a', name: card }],
  };
}

interface Made {
  plane: Plane;
  agents: Array<Record<string, unknown>>;
  /** What else to stop once the plane is closed. */
  after?: () => Promise<void>;
}

async function planeWith(dataDir: string, agents: Array<Record<string, unknown>>, extra: Parameters<typeof testPlane>[0] = {}): Promise<Made> {
  return { plane: await testPlane({ dataDir, agents: agentsOf(agents), ...extra }), agents };
}

async function mustSettle(plane: Plane, runId: string): Promise<void> {
  await plane.runtime.settled(runId);
}

/** Each kind's runs, on a plane made for it (closed by the caller). */
const MAKERS: Record<GoldenKind, (dataDir: string) => Promise<Made>> = {
  // A run refused by a halt (AdmissionRefused, HaltApplied and its lift), then one that runs.
  async local(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.summarize]);
    const { plane } = made;
    await call(plane, 'halts.apply', { scope: 'agent:summarize', reason: 'golden journal: a refused admission' });
    await failure(plane, 'runs.start', { agent: 'summarize', input: { text: 'refused while halted' }, wait: true });
    await call(plane, 'halts.lift', { scope: 'agent:summarize' });
    await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'A golden journal keeps what one build wrote, so later builds can be checked against it.' }, wait: true });
    return made;
  },
  // A call to a stopped peer (EffectFailed), then the demo peer beta started (PeerLifecycle) and asked.
  async 'peer-call'(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.askPeer], { demoPeers: true });
    const { plane } = made;
    await call(plane, 'runs.start', { agent: 'ask-peer', input: { query: 'anyone home?' }, wait: true });
    await call(plane, 'peers.start', { id: 'beta' });
    await call(plane, 'runs.start', { agent: 'ask-peer', input: { query: 'What is a golden journal?' }, wait: true });
    await call(plane, 'peers.stop', { id: 'beta' });
    return made;
  },
  async approval(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.approveEcho]);
    const { plane } = made;
    const run = await call(plane, 'runs.start', { agent: 'approve-echo', input: { topic: 'approvals' }, wait: true });
    if (run.pending?.reason !== 'approval') throw new Error(`approve-echo did not wait for approval: ${JSON.stringify(run)}`);
    await call(plane, 'approvals.decide', { runId: run.runId, waitId: run.pending.waitId, decision: 'approve', subjectHash: run.pending.subjectHash });
    await mustSettle(plane, run.runId);
    return made;
  },
  async mcp(dataDir) {
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite') } });
    const made = await planeWith(dataDir, [MANIFESTS.mcpEcho]);
    await call(made.plane, 'runs.start', { agent: 'mcp-echo', input: { text: 'hello, MCP server' }, wait: true });
    return made;
  },
  async a2a(dataDir) {
    const remote = await startSdkRemote({ name: 'Echo agent', answer: (input) => ({ echoed: input }) });
    const netguard = createNetguard({ allow: staticAllowList([new URL(remote.cardUrl).origin]) });
    const client = createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 } });
    const made = await planeWith(dataDir, [a2aCaller(remote.cardUrl)], { a2a: client });
    made.after = async () => {
      await netguard.close();
      await remote.close();
    };
    await call(made.plane, 'runs.start', { agent: 'a2a-caller', input: { text: 'hello, remote agent' }, wait: true });
    return made;
  },
  // An editor session through the tap's observation path (writing through the plane's contract),
  // every message journaled as this kind's journal was first made (--record full), sealed `observed` when the editor goes.
  async 'acp-observation'(dataDir) {
    const made = await planeWith(dataDir, []);
    await tappedSession(made.plane, 'full');
    return made;
  },
  // The same session recorded as evidence (the tap's default): its one chunk left out and named;
  // the transcript erased (it is no part of the journal, so the bundle's views are the journal's
  // alone), and the session bound to a case by its session id (CaseBound).
  async 'acp-case'(dataDir) {
    const made = await planeWith(dataDir, []);
    await tappedSession(made.plane, 'evidence');
    await call(made.plane, 'acp.transcriptErase', { sessionId: 'sess-1' });
    await call(made.plane, 'cases.bind', { caseId: 'golden-matter', sessionId: 'sess-1', note: 'golden journal: a session bound to a case' });
    return made;
  },
  // One run waits on its token ceiling and is resumed with a raised one; another waits and is cancelled.
  async 'budget-wait'(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.thrifty]);
    const { plane } = made;
    const raised = await call(plane, 'runs.start', { agent: 'thrifty', input: { topic: 'tea' }, wait: true });
    if (raised.pending?.reason !== 'budget') throw new Error(`thrifty did not wait on its budget: ${JSON.stringify(raised)}`);
    await call(plane, 'approvals.decide', { runId: raised.runId, waitId: raised.pending.waitId, decision: 'approve', subjectHash: raised.pending.subjectHash, value: { kind: 'budget', budget: { maxTokens: 1000 } } });
    await mustSettle(plane, raised.runId);
    const stopped = await call(plane, 'runs.start', { agent: 'thrifty', input: { topic: 'coffee' }, wait: true });
    if (stopped.pending?.reason !== 'budget') throw new Error(`thrifty did not wait on its budget: ${JSON.stringify(stopped)}`);
    await call(plane, 'runs.cancel', { runId: stopped.runId, reason: 'golden journal: a budget wait ended by a person' });
    return made;
  },
  // Time travel (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): thrifty raised past its ceiling
  // and finished; a fork of it at step 2 (steps 0 and 1 taken from it); a fork at step 1 whose
  // changed manifest (another final prompt) it keeps whole.
  async fork(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.thrifty]);
    const { plane } = made;
    const parent = await call(plane, 'runs.start', { agent: 'thrifty', input: { topic: 'forks' }, wait: true });
    if (parent.pending?.reason !== 'budget') throw new Error(`thrifty did not wait on its budget: ${JSON.stringify(parent)}`);
    await call(plane, 'approvals.decide', { runId: parent.runId, waitId: parent.pending.waitId, decision: 'approve', subjectHash: parent.pending.subjectHash, value: { kind: 'budget', budget: { maxTokens: 1000 } } });
    await mustSettle(plane, parent.runId);
    // Today's ceiling holds the fork too: its step 2 waits on it, and a person raises it.
    const same = await call(plane, 'runs.fork', { runId: parent.runId, at: 2, wait: true });
    if (same.pending?.reason !== 'budget') throw new Error(`the fork at step 2 did not wait on its budget: ${JSON.stringify(same)}`);
    await call(plane, 'approvals.decide', { runId: same.runId, waitId: same.pending.waitId, decision: 'approve', subjectHash: same.pending.subjectHash, value: { kind: 'budget', budget: { maxTokens: 1000 } } });
    await mustSettle(plane, same.runId);
    const changed = { ...MANIFESTS.thrifty, steps: MANIFESTS.thrifty.steps.map((s, i) => (i === 2 ? { as: 'third', model: { provider: 'local', prompt: 'Another final draft: {{steps.second.text}}', maxTokens: 40 } } : s)), budget: { maxTokens: 1000 } };
    const kept = await call(plane, 'runs.fork', { runId: parent.runId, at: 1, manifest: JSON.stringify(changed), wait: true });
    if (kept.status !== 'sealed') throw new Error(`the fork with a changed manifest did not finish: ${JSON.stringify(kept)}`);
    return made;
  },
  // Provenance at protected sinks (docs/GOVERNED-RUNTIME.md): a payee a model chose is put to a
  // person (ProvenanceVerdict asked, a provenance wait), accepted, then the payment approved; a
  // path a model chose is refused (ProvenanceVerdict refused, the run failed).
  async provenance(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.payFromModel, MANIFESTS.writeWhereTold]);
    const { plane } = made;
    const run = await call(plane, 'runs.start', { agent: 'pay-from-model', input: {}, wait: true });
    for (const reason of ['provenance', 'payment']) {
      const waiting = await call(plane, 'runs.get', { runId: run.runId });
      if (waiting.pending?.reason !== reason) throw new Error(`pay-from-model did not wait for ${reason}: ${JSON.stringify(waiting)}`);
      await call(plane, 'approvals.decide', { runId: run.runId, waitId: waiting.pending.waitId, decision: 'approve', subjectHash: waiting.pending.subjectHash });
      await mustSettle(plane, run.runId);
    }
    const refused = await call(plane, 'runs.start', { agent: 'write-where-told', input: {}, wait: true });
    if (refused.error?.code !== 'ProvenanceRefused') throw new Error(`write-where-told was not refused: ${JSON.stringify(refused)}`);
    return made;
  },
  // A team plane's keyring (docs/SECURITY.md): a plane serving an empty PostgreSQL journal admits
  // its key and runs a summary; a second instance's key is admitted, signs, and is retired.
  async keyring(dataDir) {
    const url = process.env[GOLDEN_DATABASE_ENV];
    if (!url) throw new Error(`the keyring golden journal is made on an empty PostgreSQL database: set ${GOLDEN_DATABASE_ENV}`);
    const made = await planeWith(dataDir, [MANIFESTS.summarize], { database: { url, source: GOLDEN_DATABASE_ENV } });
    const { plane } = made;
    await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'Each instance of a team plane signs with its own key, and the journal says which keys are the plane.' }, wait: true });
    const other = await Journal.open({ dataDir: tempDataDir('ap-golden-keyring-other-'), databaseUrl: url });
    await other.close();
    await plane.journal.append({ runId: null, kind: KEY_RETIRED, body: { keyId: other.key.keyId, by: 'cli:golden', reason: 'golden journal: an instance retired' } });
    return made;
  },
  // Crypto-erasure (docs/ERASURE.md): payload sealing on, a run whose input, requests, results
  // and seal are sealed under its owner's key, and a fork of it; a run that asks a person (its
  // question and the person's answer sealed too); a legal hold placed on the owner (its erasure
  // refused), lifted, and the owner erased (SubjectErased): every run reads as erased.
  async erasure(dataDir) {
    const made = await planeWith(dataDir, [MANIFESTS.summarize, MANIFESTS.approveEcho]);
    const { plane } = made;
    await call(plane, 'erasure.settings', { sealPayloads: true });
    const { runId } = await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'Erasing a subject destroys its key; every proof over its records stays valid.' }, wait: true });
    // A fork of it at step 1: its step 0 taken from the sealed parent (EffectReused, sealed).
    await call(plane, 'runs.fork', { runId, at: 1, wait: true });
    // Suspended and Decision sealed: what the person was asked, and the reason they gave.
    const asked = await call(plane, 'runs.start', { agent: 'approve-echo', input: { topic: 'a question whose answer is erased with its subject' }, wait: true });
    await call(plane, 'approvals.decide', { runId: asked.runId, waitId: asked.pending!.waitId, decision: 'approve', subjectHash: asked.pending!.subjectHash, reason: 'golden journal: approved, for a reason the erasure takes' });
    await mustSettle(plane, asked.runId);
    const { owner } = await call(plane, 'runs.get', { runId });
    await call(plane, 'holds.add', { subject: owner, reason: 'golden journal: a legal hold' });
    await failure(plane, 'erasure.erase', { subject: owner, reason: 'refused while held' });
    await call(plane, 'holds.remove', { subject: owner, reason: 'golden journal: the matter closed' });
    await call(plane, 'erasure.erase', { subject: owner, reason: 'golden journal: an erasure request' });
    return made;
  },
  // A team plane's takeover (docs/TEAM-PLANE.md): two instances on an empty PostgreSQL journal;
  // a run started at the first waits for a person; the first stops; the second takes the run
  // over (RunAdopted), a person approves it there, and it finishes.
  async team(dataDir) {
    const url = process.env[GOLDEN_DATABASE_ENV];
    if (!url) throw new Error(`the team golden journal is made on an empty PostgreSQL database: set ${GOLDEN_DATABASE_ENV}`);
    const database = { url, source: GOLDEN_DATABASE_ENV };
    const first = await planeWith(tempDataDir('ap-golden-team-first-'), [MANIFESTS.approveEcho], { database, leaseCheckMs: 50 });
    const made = await planeWith(dataDir, [MANIFESTS.approveEcho], { database, leaseCheckMs: 50 });
    const { plane } = made;
    const { runId } = await call(first.plane, 'runs.start', { agent: 'approve-echo', input: { topic: 'a run that outlives the instance that started it' }, wait: true });
    await first.plane.close();
    for (let i = 0; (await call(plane, 'runs.get', { runId })).host !== plane.status().instance; i++) {
      if (i > 1000) throw new Error('team: the second instance did not take the run over');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const waiting = await call(plane, 'runs.get', { runId });
    await call(plane, 'approvals.decide', { runId, waitId: waiting.pending!.waitId, decision: 'approve', subjectHash: waiting.pending!.subjectHash });
    await mustSettle(plane, runId);
    return made;
  },
};

/** One editor session through the tap (the fake agent, writing through the plane's contract), sealed once the editor goes. */
async function tappedSession(plane: Plane, record: RecordMode): Promise<void> {
  const client = clientOf(plane);
  const editorIn = new PassThrough();
  const editorOut = new PassThrough();
  const tap = startTap({ command: [process.execPath, FAKE_AGENT], tapName: 'golden', policy: 'observe', record, editorIn, editorOut, editorErr: new PassThrough(), sink: new PlaneSink(client) });
  let seen = '';
  const waitFor = async (text: string) => {
    const deadline = Date.now() + 15_000;
    while (!seen.includes(text)) {
      if (Date.now() > deadline) throw new Error(`the tapped agent never said ${text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  editorOut.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
  });
  const send = (m: unknown) => editorIn.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientInfo: { name: 'golden-editor', version: '1.0' } } });
  await waitFor('"id":1,');
  send({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/', mcpServers: [] } });
  await waitFor('sess-1');
  send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId: 'sess-1', prompt: [{ type: 'text', text: 'read the notes' }] } });
  await waitFor('fs/read_text_file');
  send({ jsonrpc: '2.0', id: 100, result: { content: 'the notes' } });
  await waitFor('end_turn');
  editorIn.end();
  await tap.done;
  // The sealed session reaches the journal through the contract after the tap ends.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { sessions } = await call(plane, 'acp.sessions', {});
    if (sessions.length > 0 && sessions.every((s) => s.ended)) break;
    if (Date.now() > deadline) throw new Error('the observed session was never sealed');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The empty PostgreSQL database the keyring and team golden journals are made on (one each). */
const GOLDEN_DATABASE_ENV = 'AGENTPLANE_GOLDEN_DATABASE_URL';

/** Every run's and observed session's view as the live plane shows it now. */
async function viewsOf(plane: Plane, kind: GoldenKind, agents: Array<Record<string, unknown>>, bundle: string): Promise<GoldenViews> {
  const { admitted, observed } = runsOf(readBundle(bundle).records);
  const views: GoldenViews = { kind, agents, runs: {}, sessions: {} };
  for (const runId of [...admitted, ...observed]) {
    const view = await call(plane, 'runs.get', { runId });
    if (view.status !== 'sealed') throw new Error(`${kind}: run ${runId} has not ended (${view.status})`);
    views.runs[runId] = view;
  }
  for (const runId of observed) views.sessions[runId] = await call(plane, 'acp.session', { runId });
  return views;
}

export async function generateGoldenJournals(options: { out?: string; only?: readonly GoldenKind[]; tag: string }): Promise<string[]> {
  const out = options.out ?? GOLDEN_DIR;
  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  for (const kind of options.only ?? GOLDEN_KINDS) {
    const bundle = join(out, `${kind}.${options.tag}.jsonl`);
    const viewFile = join(out, `${kind}.${options.tag}.view.json`);
    if (existsSync(bundle) || existsSync(viewFile)) throw new Error(`${bundle} exists: a golden journal is never made again (choose another --tag)`);
    const dataDir = tempDataDir(`ap-golden-${kind}-`);
    const made = await MAKERS[kind](dataDir);
    try {
      await exportBundle(made.plane.journal, { kind: 'full' }, bundle);
      writeFileSync(viewFile, `${JSON.stringify(await viewsOf(made.plane, kind, made.agents, bundle), null, 2)}\n`);
      written.push(bundle, viewFile);
    } finally {
      await made.plane.close();
      await made.after?.();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return written;
}
