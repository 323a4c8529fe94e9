/**
 * The stops a newcomer hit in the first hour, each held to what the page shows: every command
 * the UI offers runs as written from the repo (`npx agentplane …`, with this plane's data dir);
 * an unknown run id in the address says so, with a way back; the Sessions header counts what
 * the peers list; a payment's card and toast speak of its amount, once; a suspended step reads
 * as waiting for approval, never as done. Rendered in Node (renderToString) from a store the app
 * would build, over a real plane where the plane's own records and views are what is shown.
 */
import { createElement, type ReactElement } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { PeerSummary, RecordView } from '../../../src-shared/ipc/contract';
import { createPlaneClient } from '../../../src-shared/ipc/client';
import { testPlane } from '../../../tests/support/runtime-support';
import { effectTiming, headsStep, stepHeading, timingLine } from '../lib/effect-timing';
import { summarizeRecord } from '../lib/record-summary';
import { parseRoute } from '../lib/route';
import { createAppStore, type AppState, type AppStore } from '../store/app-store';
import { StoreContext } from '../store/store-context';
import { follow, manualEnv, useSyncedHarnesses, type StoreHarness } from '../store/testing/store-harness';
import { AcpSection } from './acp-section';
import { McpSection } from './mcp-section';
import { RunsSection } from './runs-section';
import { SessionsSection } from './sessions-section';
import { WaitItem } from './wait-item';

const DATA_DIR = '/home/me/My Planes/first';

function offlineStore(patch: Partial<AppState>): AppStore {
  const offline = { invoke: () => new Promise<never>(() => undefined), connectEvents: () => ({ close: () => undefined }) };
  const store = createAppStore(createPlaneClient(offline), manualEnv());
  store.setState(patch);
  return store;
}
/** Rendered from the store as it is now (a server render reads getInitialState, so that is pointed at the live state). */
const render = (store: AppStore, element: ReactElement) => renderToString(createElement(StoreContext.Provider, { value: { ...store, getInitialState: store.getState } }, element));
const text = (html: string) =>
  html
    .replace(/<!-- -->/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&gt;/g, '>')
    .replace(/&lt;/g, '<')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
/** The text of every `<code>` element: the commands and names the page shows as typed. */
const codes = (html: string) => [...html.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => text(m[1]!).trim());

const status = { version: 'test', dataDir: DATA_DIR, journal: `${DATA_DIR}/journal.sqlite`, startedAt: '2026-12-07T00:00:00.000Z', uptimeMs: 0, host: 'headless' as const, state: 'running' as const };

describe('9. every command the UI shows runs as written from the repo, in this plane’s data dir', () => {
  it('Editor sessions, empty: the tap and the demo through npx, with --data-dir; Zed’s snippet names the data dir', () => {
    const html = render(offlineStore({ status, acpLoaded: true, acpSessions: [], route: { section: 'acp', runId: null, seq: null, peerId: null } }), createElement(AcpSection, { empty: 'None.' }));
    const shown = codes(html);
    expect(shown).toContain(`npx agentplane acp tap --data-dir '${DATA_DIR}' -- <agent command>`);
    expect(shown).toContain(`npx agentplane acp demo --data-dir '${DATA_DIR}'`);
    // No command on the page starts with a bare `agentplane`: it is not on PATH in a clone.
    expect(shown.filter((c) => /^agentplane /.test(c))).toEqual([]);
    const snippet = /<pre[^>]*aria-label="Zed settings snippet"[^>]*>([\s\S]*?)<\/pre>/.exec(html)?.[1];
    const zed = JSON.parse(text(snippet ?? '')) as { agent_servers: Record<string, { command: string; args: string[] }> };
    const server = Object.values(zed.agent_servers)[0]!;
    expect(server.args.slice(0, 4)).toEqual(['acp', 'tap', '--data-dir', DATA_DIR]);
    // The editor starts `agentplane` from its own PATH: the page says how it gets there.
    expect(text(html)).toContain('npm link');
  });

  it('MCP: the stdio command a host launches names this data dir, and the page says how `agentplane` gets on PATH', () => {
    const endpoint = { url: null, token: null, stdioCommand: ['agentplane', 'mcp', '--stdio', '--data-dir', DATA_DIR], versions: ['2026-07-28'], tools: [] };
    const shown = text(render(offlineStore({ mcpEndpoint: endpoint, mcpLoaded: true, mcpServers: [] }), createElement(McpSection, { empty: 'x' })));
    expect(shown).toContain(`agentplane mcp --stdio --data-dir '${DATA_DIR}'`);
    expect(shown).toContain('npm link in the AgentPlane folder puts it there');
  });
});

describe('10. an unknown run id in the address says so, with a way back to the runs', () => {
  const harness = useSyncedHarnesses(() => testPlane());

  it('a malformed id (#/runs/run-doesnotexist) is not quietly the runs list', () => {
    const route = parseRoute('#/runs/run-doesnotexist');
    expect(route).toMatchObject({ section: 'runs', runId: 'run-doesnotexist' });
    const store = offlineStore({ runsLoaded: true });
    store.getState().navigate(route);
    const html = render(store, createElement(RunsSection, { empty: 'No runs yet.' }));
    expect(text(html)).toContain("No run run-doesnotexist in this plane's journal");
    expect(text(html)).toContain('All runs');
    expect(text(html)).not.toContain('No runs yet.');
  });

  it('a well-formed id the plane has no run for: the plane’s answer, not "Reading the run…" for ever', async () => {
    const h = await harness();
    const runId = `run-${'0'.repeat(20)}`;
    // Counted where they leave the client, and cut off past a bound: an empty page asked for
    // again and again would otherwise hold the event loop (and a browser's plane) for ever.
    let reads = 0;
    const invoke = h.wire.transport.invoke.bind(h.wire.transport);
    h.wire.transport.invoke = (command, request) => {
      if (command === 'journal.records' && ++reads > 20) return Promise.reject(new Error('journal.records asked again and again'));
      return invoke(command, request);
    };
    h.store.getState().openRun(runId);
    const shown = () => text(render(h.store, createElement(RunsSection, { empty: 'No runs yet.' })));
    await follow(h, () => shown().includes(`No run ${runId} in this plane's journal`) || reads > 20, `${runId} shown as missing`);
    expect(reads, 'journal.records requests for a run the journal does not hold').toBeLessThanOrEqual(2);
    expect(shown()).toContain(`No run ${runId} in this plane's journal`);
    expect(shown()).not.toContain('Reading the run');
  });
});

describe('11. Sessions: what the header counts is what the peers list', () => {
  const peer = (id: string): PeerSummary => ({
    id,
    name: id,
    status: 'running',
    address: `mcpv2://127.0.0.1:800${id.length}/mcpv2`,
    port: 8000 + id.length,
    publicIp: '127.0.0.1',
    llmMode: false,
    auth: 'both',
    revoked: false,
    pid: 1,
    startedAt: '2026-12-07T00:00:00.000Z',
    error: null,
    allow: {},
  }) as unknown as PeerSummary;
  const identity = { caller: 'alpha', clientIp: '127.0.0.1', firstSeenAt: '2026-12-07T00:00:01.000Z', lastUsedAt: '2026-12-07T00:00:02.000Z', calls: 1 };

  it('one identity credential and no sessions: the header does not say "1 session"', () => {
    const store = offlineStore({
      peers: [peer('alpha'), peer('beta')],
      sessions: {
        alpha: { rows: [], identities: [], error: null, loadedAt: 0 },
        beta: { rows: [], identities: [identity], error: null, loadedAt: 0 },
      } as unknown as AppState['sessions'],
    });
    const shown = text(render(store, createElement(SessionsSection, { empty: 'No peers.' })));
    expect(shown).toContain('No live sessions on alpha');
    expect(shown).toContain('No live sessions on beta');
    expect(shown).not.toMatch(/\b1 session\b/);
    expect(shown).toContain('0 sessions and 1 identity credential in use on 2 running peers');
  });
});


async function waitingPayment(h: StoreHarness): Promise<string> {
  const started = await h.store.getState().startRun('pay-vendor', { amount: 42.5, payee: 'ACME Corp' });
  if (!started.ok) throw new Error(started.error.message);
  const runId = started.value.runId;
  await follow(h, () => h.store.getState().waiting.some((r) => r.runId === runId), `${runId} in the inbox`);
  return runId;
}

async function recordsOf(h: StoreHarness, runId: string): Promise<RecordView[]> {
  const { records } = await createPlaneClient(h.wire.transport).call('journal.records', { runId, fromSeq: 1, limit: 100 });
  return records.filter((r) => r.runId === runId);
}

describe('12. a payment costs its amount: the card shows it, no $0 estimate beside it, and the toast says it once', () => {
  const harness = useSyncedHarnesses(() => testPlane());

  it('the card: Would cost 42.50 USD, no model-cost estimate', async () => {
    const h = await harness();
    const runId = await waitingPayment(h);
    const run = h.store.getState().runs[runId]!;
    const shown = text(render(h.store, createElement(WaitItem, { run, focused: false })));
    expect(shown).toContain('Pay 42.50 USD to ACME Corp');
    expect(shown).toMatch(/Would cost\s*42\.50 USD/);
    expect(shown).not.toContain('(estimate)');
  });

  it('the toast: the question, for whom and which run, once', async () => {
    const h = await harness();
    const runId = await waitingPayment(h);
    await follow(h, () => h.store.getState().announcement.text.startsWith('New in Approvals'), 'the toast');
    expect(h.store.getState().announcement.text).toBe(`New in Approvals. Pay 42.50 USD to ACME Corp — for user:local, run ${runId} (pay-vendor).`);
  });
});

describe('13. the timeline: a suspended step reads as waiting for approval, never as done', () => {
  const harness = useSyncedHarnesses(() => testPlane());

  /** A row as the timeline writes it: the group's heading (when it heads one) or the outcome's timing, then the summary. */
  function rowText(records: RecordView[], record: RecordView): string {
    const pages = { 0: records };
    const i = records.indexOf(record);
    const heading = headsStep(records[i - 1], record) ? stepHeading(pages, record) : null;
    const timing = effectTiming(pages, record);
    const lead = heading ?? (timing ? timingLine(timing) : null);
    return `${lead ? `${lead} — ` : ''}${summarizeRecord(record)}`;
  }

  it('before and after the approval, the Suspended row has no duration and no “done”; the outcome’s row has them', async () => {
    const h = await harness();
    const runId = await waitingPayment(h);
    const before = await recordsOf(h, runId);
    const suspended = before.find((r) => r.kind === 'Suspended')!;
    const waitingRow = rowText(before, suspended);
    // Soft: the row after the approval is checked too, whatever this one reads.
    expect.soft(waitingRow).toMatch(/waiting for approval/);
    expect.soft(waitingRow).not.toMatch(/\bdone\b|\d+(\.\d+)? m?s\b/);

    expect(await h.store.getState().decide(runId, 'approve')).toBe(true);
    await follow(h, () => h.store.getState().runs[runId]?.status === 'sealed', `${runId} to end`);
    const after = await recordsOf(h, runId);
    const row = rowText(after, after.find((r) => r.kind === 'Suspended')!);
    expect(row).toMatch(/^payment request — waiting for approval/);
    expect(row).not.toMatch(/\bdone\b|\d+(\.\d+)? m?s\b/);
    expect(rowText(after, after.find((r) => r.kind === 'EffectDone')!)).toMatch(/^\d+ ms · done — /);
  });
});
