/**
 * Golden journals (tests/fixtures/journals/): what the generator (scripts/golden-journals.ts)
 * and the test (tests/golden-journals.test.ts) share. A golden journal is an export bundle one
 * build wrote, kept unchanged so every later build is checked against it: it must verify, its
 * runs must fold to the views that build showed, and its runs must replay without a divergence
 * or a new effect.
 *
 * Two devices stand in for a journal import, which the plane does not have:
 * - `importBundle` writes a bundle's records, in order, into a fresh journal through
 *   Journal.append, with the journal's clock set to each record's own time. Seq, runId, kind,
 *   version, time and body are then the bundle's, so every record's hash must come out as the
 *   bundle's (it is checked): the journal is the bundle's, byte for byte, under a new key.
 *   Journal.append writes each kind at its current version only, so a record of another
 *   version cannot be written this way (importBundle says so rather than rewriting it).
 * - `replayRuntime` builds a Runtime over such a journal whose every outward door (the model,
 *   the tools, peers, MCP servers, A2A agents) refuses and counts: a run replayed there that
 *   performed anything would be seen.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CURRENT_VERSION, sealedFieldsOf, type AnyRecordDraft, type JournalRecord, type RecordKind } from '../../src-shared/journal/records';
import { prepareSealed } from '../../src-main/journal/prepare-draft';
import type { RunView } from '../../src-shared/ipc/contract';
import { silentLogger } from '../../src-main/base/logger';
import { Journal } from '../../src-main/journal/journal';
import { loadPolicy } from '../../src-main/plane/plane-config';
import { createLocalProvider } from '../../src-main/providers/local-provider';
import type { ModelProvider } from '../../src-main/runtime/model-provider';
import type { PeerCaller } from '../../src-main/runtime/peer-effect';
import type { McpToolCaller } from '../../src-main/runtime/mcp-effect';
import type { A2aCaller } from '../../src-main/runtime/a2a-effect';
import { Runtime } from '../../src-main/runtime/runtime';
import { builtinTools, workspaceOf, type Tool } from '../../src-main/runtime/tools';
import { compileAgent, type LoadedAgent } from '../../src-main/runtime/manifest';

export const GOLDEN_DIR = join(import.meta.dirname, '..', 'fixtures', 'journals');

/** The kinds of run a golden journal is made for, one bundle each per generation. */
export const GOLDEN_KINDS = ['local', 'peer-call', 'approval', 'mcp', 'a2a', 'acp-observation', 'acp-case', 'budget-wait', 'keyring', 'team', 'fork', 'provenance', 'erasure'] as const;
export type GoldenKind = (typeof GOLDEN_KINDS)[number];

/**
 * What the generator saw, stored beside a bundle as `<bundle name>.view.json`: the agent
 * manifests its runs ran (needed to replay them), and the views the live plane showed of each
 * run (`runs.get`) and of each observed ACP session (`acp.session`) once the runs had ended.
 */
export interface GoldenViews {
  kind: GoldenKind;
  agents: Array<Record<string, unknown>>;
  runs: Record<string, RunView>;
  sessions: Record<string, unknown>;
}

export interface ParsedBundle {
  header: Record<string, unknown>;
  records: JournalRecord[];
}

/** A bundle's header and records, read as any JSON reader would (the verifier checks them; this trusts them). */
export function readBundle(file: string): ParsedBundle {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const header = JSON.parse(lines[0]!) as Record<string, unknown>;
  const records: JournalRecord[] = [];
  for (const line of lines.slice(1)) {
    // A record line is {hash, proof?, record: the hashed preimage, which holds every field but the hash}.
    const parsed = JSON.parse(line) as { hash?: string; record?: Omit<JournalRecord, 'hash'> };
    if (parsed.record && parsed.hash) records.push({ ...parsed.record, hash: parsed.hash });
  }
  return { header, records };
}

export function readViews(file: string): GoldenViews {
  return JSON.parse(readFileSync(file, 'utf8')) as GoldenViews;
}

/** Agent manifests (a view file's `agents`), compiled as the plane compiles an agent file. */
export function agentsOf(manifests: ReadonlyArray<Record<string, unknown>>): LoadedAgent[] {
  return manifests.map((manifest) => compileAgent(manifest, `golden:${String(manifest.name)}`));
}

/**
 * Writes `records` into a fresh journal in `dataDir` (see the file's comment), one commit each,
 * and answers it open. A record of a version writers no longer write, and a record whose hash
 * does not come out as the bundle's, are refused with the reason.
 */
export async function importBundle(records: readonly JournalRecord[], dataDir: string, options: { checkHashes?: boolean } = {}): Promise<Journal> {
  let clock = Date.now();
  const journal = await Journal.open({ dataDir, now: () => clock, checkpointEvery: 1_000_000 });
  try {
    for (const record of records) {
      const current = (CURRENT_VERSION as Record<string, number | undefined>)[record.kind];
      // A sealed record (docs/ERASURE.md) is written as it was sealed, at its sealed version.
      const sealed = current !== record.v && sealedFieldsOf(record.kind, record.v) !== null;
      if (current !== record.v && !sealed) {
        throw new Error(`seq ${record.seq}: ${record.kind} v${record.v} cannot be imported: Journal.append writes ${record.kind} v${current ?? '?'} only, and the plane has no import that keeps a record's version`);
      }
      clock = Date.parse(record.time);
      const written = sealed
        ? (await journal.appendBatch([prepareSealed({ runId: record.runId, kind: record.kind as RecordKind, v: record.v, body: record.body })]))[0]!
        : await journal.append({ runId: record.runId, kind: record.kind, body: record.body } as AnyRecordDraft);
      if (options.checkHashes !== false && (written.seq !== record.seq || written.hash !== record.hash)) {
        throw new Error(`seq ${record.seq} (${record.kind}) imported as seq ${written.seq} with hash ${written.hash}, not the bundle's ${record.hash}`);
      }
    }
    clock = Date.now();
    return journal;
  } catch (error) {
    await journal.close();
    throw error;
  }
}

/** What a replay performed through a door it should never have used. */
export interface ReplayDoors {
  calls: string[];
}

/**
 * Where each recorded effect went (`destination` of its EffectStarted), by effect and by what
 * the run's caller names it by: the configuration a replay needs to compute the same effect
 * keys (a peer's URL, an MCP server's command, an A2A card's origin), read from the record.
 */
function recordedDestinations(records: readonly JournalRecord[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of records) {
    if (r.kind !== 'EffectStarted' || typeof r.body.destination !== 'string') continue;
    const request = (r.body.request ?? {}) as Record<string, unknown>;
    const subject = r.body.effect === 'peer' ? request.peer : r.body.effect === 'mcp' ? request.server : r.body.effect === 'a2a' ? request.card : null;
    if (typeof subject === 'string') out.set(`${String(r.body.effect)}:${subject}`, r.body.destination);
  }
  return out;
}

/**
 * A runtime over `journal` with the given agents and every outward door refusing: the model
 * (the local model's profile and price, so keys and estimates are the generator's, but no
 * answer), every tool, peers, MCP servers and A2A agents. Each refusal is counted in `doors`.
 * The doors name the destinations the run's own EffectStarted records hold (`records`: one
 * run's). Creating it resumes every unsealed run this host holds (the runtime's start-up,
 * exactly as after a restart).
 */
export async function replayRuntime(journal: Journal, agents: readonly LoadedAgent[], records: readonly JournalRecord[]): Promise<{ runtime: Runtime; doors: ReplayDoors }> {
  const doors: ReplayDoors = { calls: [] };
  const refuse = (what: string): never => {
    doors.calls.push(what);
    throw new Error(`replay performed ${what}: it should have been answered from the journal`);
  };
  const destinations = recordedDestinations(records);
  const destinationOf = (effect: string, subject: string): string => destinations.get(`${effect}:${subject}`) ?? `unrecorded:${effect}:${subject}`;
  const local = createLocalProvider();
  const model: ModelProvider = { id: local.id, profile: local.profile, pricing: local.pricing, complete: async () => refuse('a model call') };
  const tools = new Map<string, Tool>([...builtinTools].map(([name, tool]) => [name, { ...tool, run: async () => refuse(`the tool ${name}`) }]));
  const peers: PeerCaller = { destinationOf: (peerId) => destinationOf('peer', peerId), credentialOf: (peerId) => ({ kind: 'plane', audience: `peer:${peerId}` }), call: async (peerId, skill) => refuse(`a call of ${peerId}/${skill}`) };
  const mcp: McpToolCaller = { destinationOf: (server) => destinationOf('mcp', server), callTool: async (server, tool) => refuse(`the MCP tool ${server}/${tool}`) };
  const a2a: A2aCaller = {
    destinationOf: (card) => destinationOf('a2a', card),
    send: async (request) => refuse(`an A2A send to ${request.card}`),
    follow: async () => refuse('an A2A follow'),
    cancel: async () => refuse('an A2A cancel'),
  };
  const runtime = await Runtime.create({
    journal,
    agents,
    policy: loadPolicy(journal.dataDir),
    providers: new Map([['local', model]]),
    tools,
    toolContext: { workspace: workspaceOf(journal.dataDir) },
    logger: silentLogger,
    peers,
    mcp,
    a2a,
    // What another process appends (a cancel, see the test's replay) is read this soon.
    followMs: 20,
    // The run's own host at its end (a team plane's run taken over: the instance that took it).
    host: finalHostOf(records),
  });
  return { runtime, doors };
}

/** The runs of a bundle this plane's runtime executes (admitted here, sealed): the ones a replay can run again. */
export function replayableRuns(records: readonly JournalRecord[]): string[] {
  const sealed = new Set(records.filter((r) => r.kind === 'RunSealed' && r.runId).map((r) => r.runId!));
  return records
    .filter((r) => r.kind === 'RunAdmitted' && r.runId && sealed.has(r.runId) && isPlaneHost((r.body.host as string | undefined) ?? 'plane') && !payloadSealed(r))
    .map((r) => r.runId!);
}

/**
 * Whether a run's admission holds its input sealed (docs/ERASURE.md): such a run is not replayed
 * from a bundle, whose payloads need a data key no bundle carries (the erasure golden journal's
 * keys were destroyed, too); it is verified and folded like any other.
 */
export function payloadSealed(admission: JournalRecord): boolean {
  return sealedFieldsOf(admission.kind, admission.v) !== null;
}

/** A host the plane's own runtime executes runs as: `plane`, or a team plane instance's `plane@<id>` (not a peer's). */
export function isPlaneHost(host: string): boolean {
  return host === 'plane' || host.startsWith('plane@');
}

/** The host holding a run at its end, from its records: the last RunAdopted's `to`, else its admission's. */
export function finalHostOf(records: readonly JournalRecord[]): string {
  let host = 'plane';
  for (const r of records) {
    if (r.kind === 'RunAdmitted') host = (r.body.host as string | undefined) ?? 'plane';
    if (r.kind === 'RunAdopted') host = r.body.to as string;
  }
  return host;
}

/** Every run and observed session a bundle holds, in admission order. */
export function runsOf(records: readonly JournalRecord[]): { admitted: string[]; observed: string[] } {
  const admitted: string[] = [];
  const observed: string[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    if (!r.runId || seen.has(r.runId)) continue;
    seen.add(r.runId);
    if (r.kind === 'RunAdmitted') admitted.push(r.runId);
    else if (r.kind === 'Observation') observed.push(r.runId);
  }
  return { admitted, observed };
}
