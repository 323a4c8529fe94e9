/**
 * Every action the UI offers, as palette commands: go to each section, start/stop/restart
 * each peer, create a peer, start a run of each agent, open a recent run or editor session,
 * add an MCP server or connect/disconnect one, approve or deny the first waiting item, verify
 * the journal, export or search the open run, the notification setting. Built from the store's
 * current state each time the palette opens or filters.
 */
import { sections } from '../sections/sections';
import type { AppState } from '../store/app-store';
import { approvableDirectly, describeWait } from './wait-description';
import { isObservedRun } from '../store/runs-slice';

export interface PaletteCommand {
  id: string;
  group: string;
  label: string;
  /** As shown, e.g. "Alt+1"; also given to assistive technology. */
  shortcut?: string;
  keywords?: string;
  run(): void;
}

const PALETTE_DENY_REASON = 'Denied from the command palette';

export function paletteCommands(s: AppState, focusSearch: () => void): PaletteCommand[] {
  const list: PaletteCommand[] = [];
  sections.forEach((section, index) =>
    list.push({ id: `go-${section.id}`, group: 'Go to', label: `Go to ${section.label}`, shortcut: `Alt+${index + 1}`, run: () => s.setSection(section.id) }),
  );

  for (const peer of s.peers) {
    if (peer.revoked) continue;
    if (peer.status === 'running') {
      list.push({ id: `stop-${peer.id}`, group: 'Peers', label: `Stop ${peer.id}`, keywords: peer.name, run: () => void s.peerAction(peer.id, 'stop') });
      list.push({ id: `restart-${peer.id}`, group: 'Peers', label: `Restart ${peer.id}`, keywords: peer.name, run: () => void s.peerAction(peer.id, 'restart') });
    } else if (peer.status === 'stopped' || peer.status === 'failed') {
      list.push({ id: `start-${peer.id}`, group: 'Peers', label: `Start ${peer.id}`, keywords: peer.name, run: () => void s.peerAction(peer.id, 'start') });
    }
    list.push({ id: `open-peer-${peer.id}`, group: 'Peers', label: `Open ${peer.id} (send a prompt, request a payment)`, keywords: peer.name, run: () => s.navigate({ section: 'peers', peerId: peer.id }) });
  }
  list.push({
    id: 'create-peer',
    group: 'Peers',
    label: 'Create a peer…',
    keywords: 'new add',
    run: () => {
      s.setSection('peers');
      s.requestPeerForm();
    },
  });

  for (const agent of s.agents) {
    list.push({
      id: `start-run-${agent.name}`,
      group: 'Runs',
      label: `Start a run of ${agent.name}…`,
      keywords: agent.description,
      run: () => {
        s.navigate({ section: 'runs' });
        s.requestStartForm(agent.name);
      },
    });
  }
  const recent = Object.values(s.runs)
    .filter((run) => !isObservedRun(run))
    .sort((a, b) => b.admittedAt.localeCompare(a.admittedAt))
    .slice(0, 8);
  for (const run of recent) list.push({ id: `open-${run.runId}`, group: 'Runs', label: `Open run ${run.runId} (${run.agent})`, run: () => s.openRun(run.runId) });

  const waiting = s.waiting.filter((r) => r.pending);
  const firstApprovable = waiting.find((r) => approvableDirectly(r.pending!));
  const first = waiting[0];
  if (firstApprovable) {
    const what = describeWait(firstApprovable.pending!);
    list.push({
      id: 'approve-first',
      group: 'Approvals',
      label: `Approve the first waiting item: ${what.title}, ${firstApprovable.agent}`,
      keywords: 'approve allow yes',
      run: () => void s.decide(firstApprovable.runId, 'approve'),
    });
  }
  if (first) {
    const what = describeWait(first.pending!);
    if (first.pending!.reason !== 'recovery' && first.pending!.reason !== 'halt') {
      list.push({
        id: 'deny-first',
        group: 'Approvals',
        label: `Deny the first waiting item: ${what.title}, ${first.agent}`,
        keywords: 'deny refuse no stop',
        run: () => void s.decide(first.runId, 'deny', { reason: PALETTE_DENY_REASON }),
      });
    }
    list.push({
      id: 'open-first',
      group: 'Approvals',
      label: `Show the first waiting item: ${what.title}, ${first.agent}`,
      run: () => {
        s.setFocusWait(first.runId);
        s.setSection('approvals');
      },
    });
  }

  list.push({
    id: 'verify',
    group: 'Journal',
    label: 'Verify the journal',
    keywords: 'check hash chain merkle signature',
    run: () => void s.runVerify(true),
  });
  const open = s.timeline.runId;
  if (open && s.route.section === 'runs') {
    list.push({ id: 'export-open', group: 'Journal', label: `Export ${open} as a verifiable bundle`, keywords: 'download save', run: () => void s.exportRun(open) });
    list.push({ id: 'search-open', group: 'Journal', label: 'Search this run', keywords: 'find filter', run: focusSearch });
    list.push({ id: 'back-runs', group: 'Runs', label: 'Back to all runs', run: () => s.navigate({ section: 'runs' }) });
  }
  // Editor sessions: the latest few, and the open one's export.
  const sessions = [...s.acpSessions].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, 8);
  for (const session of sessions) {
    list.push({
      id: `open-acp-${session.runId}`,
      group: 'Editor sessions',
      label: `Open editor session ${session.tapName} (${session.sessionId || session.runId})`,
      keywords: `acp ${session.client.name ?? ''} ${session.agent.name ?? ''} ${session.cwd ?? ''}`,
      run: () => s.navigate({ section: 'acp', runId: session.runId }),
    });
  }
  const openSession = s.acpOpen.runId;
  if (openSession && s.route.section === 'acp') {
    list.push({ id: 'export-acp', group: 'Journal', label: `Export editor session ${openSession} as a verifiable bundle`, keywords: 'download save acp', run: () => void s.exportRun(openSession) });
    list.push({ id: 'back-acp', group: 'Editor sessions', label: 'Back to all editor sessions', run: () => s.navigate({ section: 'acp' }) });
  }
  // MCP: add a server; connect or disconnect each one the section has listed.
  list.push({
    id: 'add-mcp-server',
    group: 'MCP',
    label: 'Add an MCP server…',
    keywords: 'mcp new declare tool server',
    run: () => {
      s.setSection('mcp');
      s.requestMcpForm();
    },
  });
  for (const server of s.mcpServers) {
    const live = server.state === 'connected' || server.state === 'connecting';
    list.push({
      id: `${live ? 'disconnect' : 'connect'}-mcp-${server.name}`,
      group: 'MCP',
      label: `${live ? 'Disconnect' : 'Connect'} MCP server ${server.name}`,
      keywords: `mcp ${server.command ?? server.url ?? ''}`,
      run: () => void s.mcpServerAction(server.name, live ? 'disconnect' : 'connect'),
    });
  }
  list.push({
    id: 'notifications',
    group: 'Settings',
    label: s.preferences.notifications ? 'Turn off notifications for new approvals' : 'Turn on notifications for new approvals',
    run: () => void s.setNotifications(!s.preferences.notifications),
  });
  return list;
}

export function filterCommands(commands: PaletteCommand[], query: string): PaletteCommand[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return commands;
  const matching = commands.filter((c) => {
    const text = `${c.label} ${c.group} ${c.keywords ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  // Labels that start with the query first, then those with a word starting with it; stable otherwise.
  const first = words[0]!;
  const rank = (c: PaletteCommand) => {
    const label = c.label.toLowerCase();
    if (label.startsWith(first)) return 0;
    if (label.split(/[\s(]+/).some((w) => w.startsWith(first))) return 1;
    return 2;
  };
  return matching.map((c, i) => ({ c, i, r: rank(c) })).sort((a, b) => a.r - b.r || a.i - b.i).map(({ c }) => c);
}
