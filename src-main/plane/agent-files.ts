/**
 * The person's own agent files (<data dir>/agents) while the plane runs. One file that does not
 * load never stops the plane: it is left out, listed as broken with its file, field and fix
 * (`agents.list`, `agentplane agents list`, the Runs view), and a run of it is refused with
 * that problem. The folder is watched (fs.watch, debounced: an editor's save is a burst of
 * writes, temporaries and renames, read once it settles), the data dir too while the folder
 * does not exist, so a folder made later, removed or replaced is followed; `agents.reload`
 * reads it on demand. Each read that changes something replaces the runtime's agents, is
 * logged, and is announced to every client as `agents.changed` (the whole list).
 *
 * The bundled agents (resources/agents) are part of the build: one of them that does not load
 * is a build error and still stops the plane. Every file read here is held to the data dir's
 * rule (base/data-dir-guard.ts) at the moment it is read: a manifest grants authority, so one
 * others could have written is broken, with the chmod that fixes it, not trusted.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { extname, join } from 'node:path';
import type { AgentsView } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { ensureTrustedEntry } from '../base/data-dir-guard';
import { errorFields, type Logger } from '../base/logger';
import { PlaneError } from '../base/plane-error';
import { brokenAgentLine, MANIFEST_EXTENSIONS, type BrokenAgent, type LoadedAgent } from '../runtime/manifest';
import type { PolicyEngine } from '../runtime/policy';
import { agentSetProblems, type Runtime } from '../runtime/runtime';
import type { Tool } from '../runtime/tools';
import type { CallContext, CommandHandlers } from './dispatch';
import { loadBundledAgents, ownAgentsDir, readOwnAgents } from './plane-config';
import { agentsView } from './runtime-handlers';

/** How long the folder must be quiet before it is read again (an editor's save is several events). */
const SETTLE_MS = 100;

export interface AgentsReload {
  /** Agents runnable now that were not before (a new file, or a broken one fixed). */
  added: string[];
  /** Agents runnable before and now, whose file changed. */
  changed: string[];
  /** Agents runnable before and not now (the file removed, or now broken). */
  removed: string[];
  /** Every agent file that does not load, as it stands now. */
  broken: BrokenAgent[];
}

export interface AgentFilesOptions {
  dataDir: string;
  policy: PolicyEngine;
  tools: ReadonlyMap<string, Tool>;
  logger: Logger;
  /** Quiet time before a change is read (ms); default SETTLE_MS. */
  settleMs?: number;
}

interface Runnable {
  source: string;
  digest: string | undefined;
}

interface Read {
  agents: LoadedAgent[];
  broken: BrokenAgent[];
  own: Map<string, Runnable>;
  /** Every manifest file read, by path: the SHA-256 of its text. */
  digests: Map<string, string>;
}

export class AgentFiles {
  private readonly bundled: LoadedAgent[];
  private readonly dir: string;
  /** The person's agents that run now, by name. */
  private own = new Map<string, Runnable>();
  private broken: BrokenAgent[] = [];
  /** The texts last read, by path (their SHA-256). */
  private digests = new Map<string, string>();
  private runtime: Runtime | null = null;
  private announce: ((view: AgentsView) => void) | null = null;
  private folderWatch: FSWatcher | null = null;
  private folderId: string | null = null;
  private parentWatch: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: AgentFilesOptions) {
    this.bundled = loadBundledAgents();
    this.dir = ownAgentsDir(options.dataDir);
  }

  /** The first read, before the runtime exists: what it starts with. Broken files are logged. */
  load(): { agents: LoadedAgent[]; broken: BrokenAgent[] } {
    const read = this.read();
    this.own = read.own;
    this.broken = read.broken;
    this.digests = read.digests;
    for (const broken of read.broken) this.logBroken(broken);
    return { agents: read.agents, broken: read.broken };
  }

  /** The runtime whose agents later reads replace, and where a change is announced. */
  attach(runtime: Runtime, announce: (view: AgentsView) => void): void {
    this.runtime = runtime;
    this.announce = announce;
  }

  /** Reads the folder now: replaces the runtime's agents when something changed, and says what. */
  reload(): AgentsReload {
    const read = this.read();
    const before = this.own;
    const added = [...read.own.keys()].filter((name) => !before.has(name)).sort();
    const removed = [...before.keys()].filter((name) => !read.own.has(name)).sort();
    const changed = [...read.own].filter(([name, now]) => {
      const was = before.get(name);
      return was !== undefined && (was.source !== now.source || was.digest !== now.digest);
    }).map(([name]) => name).sort();
    const brokenBefore = new Set(this.broken.map(brokenAgentLine));
    const brokenChanged = read.broken.length !== this.broken.length || read.broken.some((b) => !brokenBefore.has(brokenAgentLine(b)));
    const report: AgentsReload = { added, changed, removed, broken: read.broken };
    if (added.length === 0 && changed.length === 0 && removed.length === 0 && !brokenChanged) return report;
    if (this.runtime) {
      try {
        this.runtime.replaceAgents(read.agents, read.broken);
      } catch (error) {
        // Only the bundled agents can be refused here (the person's are left out as broken
        // first), and they do not change while the plane runs: kept as they were.
        this.options.logger.log('error', 'the agent files were read again but could not be applied; the agents stay as they were', errorFields(error));
        return { added: [], changed: [], removed: [], broken: this.broken };
      }
    }
    for (const broken of read.broken) if (!brokenBefore.has(brokenAgentLine(broken))) this.logBroken(broken);
    this.own = read.own;
    this.broken = read.broken;
    this.digests = read.digests;
    this.options.logger.log('info', 'agent files read again', { added, changed, removed, broken: read.broken.map((b) => b.name) });
    if (this.runtime) this.announce?.(agentsView(this.runtime));
    return report;
  }

  /** Follows the folder from now on: changes are read once they settle, a change since the first read too. */
  watch(): void {
    this.arm();
    if (this.changedSinceRead()) this.settle();
  }

  /** Whether the folder's files differ from the texts last read (a cheap look: no manifest is compiled). */
  private changedSinceRead(): boolean {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((name) => MANIFEST_EXTENSIONS.includes(extname(name)));
    } catch {
      return this.digests.size > 0;
    }
    if (names.length !== this.digests.size) return true;
    return names.some((name) => {
      const path = join(this.dir, name);
      try {
        return this.digests.get(path) !== createHash('sha256').update(readFileSync(path, 'utf8')).digest('hex');
      } catch {
        return true;
      }
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.folderWatch?.close();
    this.folderWatch = null;
    this.parentWatch?.close();
    this.parentWatch = null;
  }

  private logBroken(broken: BrokenAgent): void {
    this.options.logger.log('warn', `agent file ${brokenAgentLine(broken)}; the plane runs without agent ${broken.name} until the file is fixed`, { source: broken.source });
  }

  /** The folder as it is now: the agents that load and may run beside the rest, and the broken files. */
  private read(): Read {
    const { dataDir, policy, tools } = this.options;
    try {
      ensureTrustedEntry(dataDir, this.dir, 'folder');
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      return { agents: [...this.bundled], broken: [{ name: 'agents', source: this.dir, field: null, line: null, problem }], own: new Map(), digests: new Map() };
    }
    const prefer = new Map([...this.own].map(([name, runnable]) => [name, runnable.source]));
    const folder = readOwnAgents(dataDir, this.bundled, { prefer, trust: (path) => ensureTrustedEntry(dataDir, path, 'state') });
    let own = folder.agents;
    const broken = [...folder.broken];
    // What only the set can tell (authority, tools, agent tools naming agents): such an agent
    // is broken too, and leaving it out may break one that named it, so until none is left.
    for (;;) {
      const names = new Set(own.map((a) => a.manifest.name));
      const failing = new Map<string, { field: string | null; problem: string }>();
      for (const found of agentSetProblems([...this.bundled, ...own], policy, tools)) {
        if (names.has(found.agent) && !failing.has(found.agent)) failing.set(found.agent, { field: found.field, problem: `${found.message}: ${found.fix}` });
      }
      if (failing.size === 0) break;
      for (const agent of own) {
        const found = failing.get(agent.manifest.name);
        if (found) broken.push({ name: agent.manifest.name, source: agent.source, field: found.field, line: null, problem: found.problem });
      }
      own = own.filter((a) => !failing.has(a.manifest.name));
    }
    broken.sort((a, b) => a.source.localeCompare(b.source));
    return {
      agents: [...this.bundled, ...own],
      broken,
      own: new Map(own.map((a) => [a.manifest.name, { source: a.source, digest: folder.digests.get(a.source) }])),
      digests: folder.digests,
    };
  }

  private settle(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.closed) return;
      this.arm();
      try {
        this.reload();
      } catch (error) {
        this.options.logger.log('error', 'the agent files could not be read again', errorFields(error));
      }
    }, this.options.settleMs ?? SETTLE_MS);
    this.timer.unref();
  }

  /**
   * Watches the folder when it is there (again, when it was replaced), else the data dir for
   * its name: a folder made after the start, or removed and made again, is followed.
   */
  private arm(): void {
    if (this.closed) return;
    let id: string | null = null;
    try {
      const stat = statSync(this.dir);
      if (stat.isDirectory()) id = `${stat.dev}:${stat.ino}`;
    } catch {
      // Not there (yet): the data dir is watched for it below.
    }
    if (id !== null && (this.folderWatch === null || this.folderId !== id)) {
      this.folderWatch?.close();
      this.folderWatch = this.watchOrNull(this.dir, () => this.settle());
      this.folderId = this.folderWatch ? id : null;
    } else if (id === null && this.folderWatch) {
      this.folderWatch.close();
      this.folderWatch = null;
      this.folderId = null;
    }
    if (this.folderWatch) {
      this.parentWatch?.close();
      this.parentWatch = null;
    } else if (!this.parentWatch) {
      this.parentWatch = this.watchOrNull(this.options.dataDir, (name) => {
        if (name === null || name === 'agents') this.settle();
      });
    }
  }

  private watchOrNull(path: string, onEvent: (name: string | null) => void): FSWatcher | null {
    try {
      const watcher = watch(path, { persistent: false }, (_event, name) => onEvent(name === null ? null : String(name)));
      watcher.on('error', () => {
        // The watched folder went away (or the watch failed): look again once things settle.
        watcher.close();
        if (this.folderWatch === watcher) {
          this.folderWatch = null;
          this.folderId = null;
        }
        if (this.parentWatch === watcher) this.parentWatch = null;
        this.settle();
      });
      return watcher;
    } catch (error) {
      this.options.logger.log('warn', `cannot watch ${path} for agent files; \`agentplane agents reload\` reads them`, errorFields(error));
      return null;
    }
  }
}

/** `agents.reload`: a person's command (a protocol caller does not decide when the plane reads its files). */
export function agentFilesHandlers(files: AgentFiles | null): Pick<CommandHandlers, 'agents.reload'> {
  return {
    'agents.reload': (_request, context: CallContext) => {
      if (context.caller) throw new PlaneError(ErrorCode.Forbidden, 'only a person at this plane can reload its agent files');
      if (!files) throw new PlaneError(ErrorCode.Conflict, 'this plane was given its agents when it was built; it reads no agent files');
      return files.reload();
    },
  };
}
