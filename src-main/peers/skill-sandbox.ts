/**
 * The sandbox a custom skill's script runs in: a child Node process that sees nothing of the
 * plane, the peer or the user, and that cannot outlive its deadline or its memory.
 *
 * Layers, outermost first, and why each is there:
 *
 * 1. bubblewrap (Linux, when `bwrap` is installed): new user, pid, net, ipc, uts and cgroup
 *    namespaces (`--unshare-all`), uid/gid 65534, a read-only root holding only /usr (and the
 *    /lib symlinks, or the Node binary's own folder when it lives elsewhere), its own /proc
 *    (so no parent's cmdline or environ: the peer's pid does not exist in there), a minimal
 *    /dev, a small tmpfs /tmp, and a tmpfs of the declared scratch size at /scratch as the only
 *    other writable folder (see "File space" below). No network interface but its own
 *    loopback, so nothing on the host's 127.0.0.1 (the bridge, other peers) is reachable.
 *    `--die-with-parent` ends it when the peer dies; `--clearenv` starts it with no
 *    environment (the peer's env, with its admin token, never crosses, and bwrap itself is
 *    spawned with an empty env too, since the sandbox's pid 1 is a bwrap whose
 *    /proc/1/environ the script could read).
 * 2. RLIMIT_AS via util-linux `prlimit` (Linux): V8's --max-old-space-size bounds only the JS
 *    heap; Buffers, typed arrays and WebAssembly memories live outside it. The address-space
 *    limit bounds the whole process. See `addressSpaceLimit` for the formula.
 * 3. Node's permission model, everywhere: fs reads and writes only in the scratch folder, no
 *    child processes, no workers, no native addons, no WASI, no inspector. On macOS and
 *    Windows (or Linux without bwrap) it is the only isolation: it does not restrict the
 *    network on Node 20, nor signals to other processes of the same user, and outside Linux
 *    there is no whole-process memory limit, which is why `sandboxWarning` tells the peer's
 *    operator so at start.
 * 4. `--no-expose-wasm`: under the address-space limit V8 cannot reserve a WebAssembly memory
 *    anyway (on 64-bit it reserves gigabytes of guard region per memory; measured: even a
 *    one-page, 64 KiB memory fails), and where no such limit exists WebAssembly memory would
 *    bypass the heap cap; so the global is absent and a script gets a clear "WebAssembly is
 *    not defined".
 *
 * The process runs in its own process group (spawned detached, so setsid) and the deadline
 * kills the whole group. A group kill alone misses a grandchild that made itself a new session
 * (Node's `detached: true` does exactly that; tried: it outlived the deadline and wrote its
 * file). Under bubblewrap the group kill reaches the outer bwrap; the sandbox's pid 1 (an inner
 * bwrap in a session of its own) follows through --die-with-parent (without it, tried: the
 * script kept running), and the kernel ends every process of a pid namespace when its pid 1
 * goes. Where bubblewrap is absent, the permission model lets no child process start at all.
 *
 * The program is passed with `-e`: under the permission model that needs no fs grant (a runner
 * file would need one and would sit in a folder the script can write), and it is a constant,
 * so argv shows nothing secret. The script and its arguments travel on stdin.
 *
 * File space. Invariant: a script writes at most `scratchBytes` into its scratch folder, and
 * under bubblewrap nothing at all onto the host's disk. Why: a caller who may run a script
 * could otherwise fill the disk the peer, the plane and the journal share (measured before
 * this bound: a `memoryMb: 64` script wrote 400 MB into the host's temporary folder in 3.6 s).
 * - Under bubblewrap (0.8 or later, which has `--size`), /scratch is a tmpfs of exactly
 *   `scratchBytes`, made inside the sandbox: a write past it fails with ENOSPC, and what was
 *   written lives in memory and goes with the sandbox's mount namespace. The host folder of
 *   `request.scratch` is not mounted at all. Nothing needs to cross it: the script and its
 *   arguments come on stdin and its answer leaves on stdout, so there is nothing to stage in
 *   or copy out (if files ever must cross, copy them in through a read-only bind and out under
 *   a size cap, rather than binding a host folder writable). tmpfs is memory the address-space
 *   limit does not see, so /tmp (sized by memoryMb) and /scratch (by scratchBytes) add to what
 *   one sandbox may hold; custom-skills.ts bounds how many sandboxes run at once.
 * - Elsewhere (no bubblewrap, or one older than 0.8), the scratch is the host folder itself,
 *   bounded two ways: RLIMIT_FSIZE (util-linux `prlimit --fsize`, Linux) stops any one file at
 *   `scratchBytes` with EFBIG, and the folder is measured every SCRATCH_POLL_MS while the
 *   script runs and once after it ends; over the limit, the process group is killed and the run
 *   ends `scratch-limit`. The measurement bounds the total only up to what a script writes
 *   between two measurements (disk speed × SCRATCH_POLL_MS) and whatever the disk holds for that
 *   moment; outside Linux the measurement is the only bound. The caller removes the folder.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';

export type SandboxKind = 'bubblewrap' | 'permission-model-only';

export interface SandboxRequest {
  /**
   * An existing, absolute folder: the only one the program may read or write where /scratch is
   * not a tmpfs of its own (see "File space" above). Under bubblewrap it is not mounted.
   */
  scratch: string;
  /** The most the program may write into its scratch folder, in bytes (a positive integer). */
  scratchBytes: number;
  /** Node source run with `-e`. */
  program: string;
  /** Written to the program's stdin, which is then closed. */
  input: string;
  timeoutMs: number;
  memoryMb: number;
  maxOutputBytes: number;
  /** Aborting it kills the program (its whole process group); the run ends `cancelled`. */
  signal?: AbortSignal;
  /**
   * Tests turn one layer off to prove the other holds on its own. Production callers leave
   * this out and get every layer this machine has.
   */
  layers?: { bubblewrap?: boolean; permissionModel?: boolean };
}

export type SandboxOutcome =
  | { kind: 'exited'; stdout: string; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: 'timeout' }
  | { kind: 'output-limit' }
  /** Only where the scratch is a host folder: the program wrote more than scratchBytes into it. */
  | { kind: 'scratch-limit' }
  | { kind: 'cancelled' }
  | { kind: 'out-of-memory'; stderr: string }
  | { kind: 'sandbox-failed'; message: string };

/** Where scratch appears inside bubblewrap. */
const SCRATCH_INSIDE = '/scratch';
const SANDBOX_UID = 65534;

interface HostTools {
  bwrap: string | null;
  prlimit: string | null;
  bwrapHasSize: boolean;
  bwrapHasDisableUserns: boolean;
}

let tools: HostTools | undefined;

function findExecutable(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function hostTools(): HostTools {
  if (tools) return tools;
  if (process.platform !== 'linux') return (tools = { bwrap: null, prlimit: null, bwrapHasSize: false, bwrapHasDisableUserns: false });
  const bwrap = findExecutable('bwrap');
  // --size (tmpfs size) and --disable-userns arrived in bubblewrap 0.8; older ones refuse
  // unknown options, so ask this one what it knows.
  const help = bwrap ? spawnSync(bwrap, ['--help'], { encoding: 'utf8', env: {}, timeout: 5_000 }) : null;
  const text = `${help?.stdout ?? ''}${help?.stderr ?? ''}`;
  return (tools = { bwrap, prlimit: findExecutable('prlimit'), bwrapHasSize: text.includes('--size'), bwrapHasDisableUserns: text.includes('--disable-userns') });
}

/** Which isolation scripts get on this machine. */
export function sandboxKind(): SandboxKind {
  return hostTools().bwrap ? 'bubblewrap' : 'permission-model-only';
}

/** The line a peer with script skills logs at start when its scripts are less isolated, or null. */
export function sandboxWarning(): string | null {
  const host = hostTools();
  if (host.bwrap && host.prlimit) return null;
  const missing: string[] = [];
  if (!host.bwrap) {
    missing.push(
      process.platform === 'linux'
        ? 'without namespace isolation (bubblewrap is not installed: install the bubblewrap package); Node\'s permission model still confines files and child processes, but not the network'
        : `without namespace isolation (bubblewrap is Linux-only; on ${process.platform} only Node's permission model confines files and child processes, not the network)`,
    );
  }
  if (!host.prlimit) missing.push('without a whole-process memory limit (only the V8 heap is capped)');
  return `custom skill scripts run ${missing.join(' and ')}; load only scripts you would run yourself`;
}

/**
 * RLIMIT_AS for a script declared to need `memoryMb`.
 *
 *   limit = startup reservation + 64 MiB + 1.5 × memoryMb
 *
 * Why: V8 reserves address space it never touches before any script runs (on x64 Node 20: a
 * 512 MiB code range, plus the binary, the libraries and thread stacks), and RLIMIT_AS counts
 * reservations, not use. Measured here (Node 20.20, x64, with MALLOC_ARENA_MAX=1): Node starts
 * at 654 MiB and not below, whatever the heap size; a script holding 75% of its heap in JS
 * arrays needs 654 + 16 (16 MiB heap), + 63 (64), + 221 (256), + 851 (1024) MiB. So 1.5 ×
 * memoryMb covers a heap filled to V8's own limit (verified at 16, 64, 256 and 1024: the script
 * that fills its heap forever ends with V8's "Reached heap limit", not a failed reservation)
 * and 64 MiB covers what startup reserves beyond the probe (the permission model, stdin, the
 * script's compiled code). The largest Buffer that then fits is 84, 156, 444 and 1596 MiB for
 * those four sizes: a 64 MiB script gets about 150 MiB of Buffers, not 2 GiB. The probe read
 * 647 MiB here. The startup reservation depends on the build (Electron builds V8 with pointer
 * compression and V8's own sandbox, which reserve differently; arm64 has a smaller code range;
 * neither measured here), so it is measured once per process by starting the same binary with
 * the same V8 flags and reading its VmPeak, instead of being a constant that would stop Node
 * starting on one build and leave hundreds of MiB of slack on another.
 *
 * MALLOC_ARENA_MAX=1: glibc gives each thread that mallocs its own arena, each a 64 MiB
 * reservation; V8's worker threads made 5 of them (320 MiB of address space nobody uses),
 * which would have to be added to every limit.
 */
export async function addressSpaceLimit(memoryMb: number): Promise<number> {
  const MiB = 1024 * 1024;
  return (await startupReservation()) + 64 * MiB + Math.ceil(1.5 * memoryMb) * MiB;
}

/** Measured on Node 20.20 x64 (654 MiB), rounded up: used only if the probe cannot run. */
const FALLBACK_STARTUP_RESERVATION = 704 * 1024 * 1024;
let startupProbe: Promise<number> | undefined;

function startupReservation(): Promise<number> {
  startupProbe ??= new Promise<number>((resolve) => {
    const probe = spawn(process.execPath, [...nodeFlags(16), '-e', "process.stdout.write(/VmPeak:\\s*(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1])"], {
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    probe.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    probe.on('error', () => resolve(FALLBACK_STARTUP_RESERVATION));
    probe.on('close', (code) => resolve(code === 0 && /^\d+$/.test(out) ? Number(out) * 1024 : FALLBACK_STARTUP_RESERVATION));
  });
  return startupProbe;
}

/** The only environment the child starts with: no variable of the peer's. */
function childEnv(): Record<string, string> {
  return { MALLOC_ARENA_MAX: '1', ...(process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}) };
}

function nodeFlags(memoryMb: number): string[] {
  return [`--max-old-space-size=${memoryMb}`, '--no-expose-wasm', '--disable-warning=ExperimentalWarning'];
}

function permissionFlags(scratch: string): string[] {
  // Node 22.13+ made the model stable as --permission; 20 knows only the experimental name.
  const flag = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
  // No --allow-child-process, --allow-worker, --allow-addons or --allow-wasi: all refused.
  return [flag, `--allow-fs-read=${scratch}`, `--allow-fs-write=${scratch}`];
}

/** The read-only system the sandboxed Node needs: /usr, the /lib* links (or folders), and the binary's own folder. */
function rootBinds(nodeBinary: string): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const path of ['/lib', '/lib64', '/lib32', '/libx32']) {
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  // A Node outside /usr (nvm, a tarball, Electron's folder) is bound read-only where it is.
  if (!nodeBinary.startsWith('/usr/')) args.push('--ro-bind', dirname(nodeBinary), dirname(nodeBinary));
  return args;
}

/** Where /scratch comes from inside bubblewrap: a tmpfs of its own (0.8+), or the host folder. */
type ScratchMount = { tmpfsBytes: number } | { hostFolder: string };

function bubblewrapArgs(host: HostTools, scratch: ScratchMount, nodeBinary: string, memoryMb: number): string[] {
  return [
    // --unshare-all only tries a user namespace; require one (and fail closed without it).
    '--unshare-all',
    '--unshare-user',
    '--uid', String(SANDBOX_UID),
    '--gid', String(SANDBOX_UID),
    '--hostname', 'skill',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    ...Object.entries(childEnv()).flatMap(([name, value]) => ['--setenv', name, value]),
    ...rootBinds(nodeBinary),
    '--proc', '/proc',
    '--dev', '/dev',
    // tmpfs is memory the address-space limit does not see: bound it by the declared memory.
    ...(host.bwrapHasSize ? ['--size', String(memoryMb * 1024 * 1024)] : []),
    '--tmpfs', '/tmp',
    // The scratch: a tmpfs capped at the declared size, so a script that writes past it gets
    // ENOSPC and the host's disk never sees a byte of it.
    ...('tmpfsBytes' in scratch ? ['--size', String(scratch.tmpfsBytes), '--tmpfs', SCRATCH_INSIDE] : ['--bind', scratch.hostFolder, SCRATCH_INSIDE]),
    '--chdir', SCRATCH_INSIDE,
    ...(host.bwrapHasDisableUserns ? ['--disable-userns'] : []),
    '--',
  ];
}

/** How often a host scratch folder is measured while its program runs (see "File space"). */
const SCRATCH_POLL_MS = 50;
/** What an entry of the folder costs at least: a file or folder takes a block however small. */
const MIN_ENTRY_BYTES = 4096;

/**
 * The bytes under `dir` (each entry counted as its size, at least MIN_ENTRY_BYTES; a sparse file
 * at its full size, which overcounts rather than under). Stops counting once past `cap`, so a
 * folder of a million empty files costs one walk of `cap / MIN_ENTRY_BYTES` entries, not more.
 */
async function folderBytes(dir: string, cap: number): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let names: string[];
    try {
      names = await readdir(current);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(current, name);
      try {
        const stat = await lstat(path);
        total += Math.max(stat.size, MIN_ENTRY_BYTES);
        if (stat.isDirectory()) pending.push(path);
      } catch {
        // removed between the listing and the stat
      }
      if (total > cap) return total;
    }
  }
  return total;
}

/** Measures `dir` every SCRATCH_POLL_MS and calls `over` (once) when it holds more than `cap`. */
function watchScratch(dir: string, cap: number, over: () => void): { stop(): void; isOver(): Promise<boolean> } {
  let measuring = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (measuring || stopped) return;
    measuring = true;
    void folderBytes(dir, cap).then((bytes) => {
      measuring = false;
      if (bytes > cap && !stopped) over();
    });
  }, SCRATCH_POLL_MS);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
    isOver: async () => (await folderBytes(dir, cap)) > cap,
  };
}

const OUT_OF_MEMORY = /heap out of memory|Fatal process OOM|Fatal JavaScript OOM|Reached heap limit|Allocation failed|Cannot allocate memory|could not allocate/i;
const STDERR_TAIL = 4096;

/** Runs `program` under every layer this machine has (or those `layers` leaves on). */
export async function runSandboxed(request: SandboxRequest): Promise<SandboxOutcome> {
  const host = hostTools();
  const useBwrap = Boolean(host.bwrap) && request.layers?.bubblewrap !== false;
  const usePermissions = request.layers?.permissionModel !== false;
  const nodeBinary = realpathSync(process.execPath);
  const scratch = realpathSync(request.scratch);
  if (!Number.isSafeInteger(request.scratchBytes) || request.scratchBytes <= 0) {
    return { kind: 'sandbox-failed', message: `scratchBytes must be a positive integer, got ${String(request.scratchBytes)}` };
  }
  if (request.signal?.aborted) return { kind: 'cancelled' };
  // The scratch is a sized tmpfs where bubblewrap can make one; a host folder otherwise.
  const scratchOnTmpfs = useBwrap && host.bwrapHasSize;
  const seen = useBwrap ? SCRATCH_INSIDE : scratch;
  const nodeArgs = [...nodeFlags(request.memoryMb), ...(usePermissions ? permissionFlags(seen) : []), '-e', request.program];

  let command = nodeBinary;
  let args = nodeArgs;
  if (useBwrap) {
    command = host.bwrap!;
    const mount: ScratchMount = scratchOnTmpfs ? { tmpfsBytes: request.scratchBytes } : { hostFolder: scratch };
    args = [...bubblewrapArgs(host, mount, nodeBinary, request.memoryMb), nodeBinary, ...nodeArgs];
  }
  if (host.prlimit) {
    // prlimit sets the limits on itself and execs the command, which inherits them. A host
    // scratch folder gets RLIMIT_FSIZE too (not the tmpfs: it would also cap files in /tmp).
    const fsize = scratchOnTmpfs ? [] : [`--fsize=${request.scratchBytes}`];
    args = [`--as=${await addressSpaceLimit(request.memoryMb)}`, ...fsize, '--', command, ...args];
    command = host.prlimit;
  }

  return new Promise<SandboxOutcome>((resolve) => {
    const groupKill = process.platform !== 'win32';
    const child = spawn(command, args, { cwd: scratch, env: useBwrap ? {} : childEnv(), stdio: ['pipe', 'pipe', 'pipe'], detached: groupKill, windowsHide: true });
    let stdout = '';
    let stdoutBytes = 0;
    let stderr = '';
    let ended: 'timeout' | 'output-limit' | 'scratch-limit' | 'cancelled' | null = null;
    const kill = () => {
      try {
        // The whole group: the child made itself a session leader (detached), so this reaches
        // every process it started that stayed in its group.
        if (groupKill && child.pid) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      ended ??= 'timeout';
      kill();
    }, request.timeoutMs);
    const watch = scratchOnTmpfs
      ? null
      : watchScratch(scratch, request.scratchBytes, () => {
          ended ??= 'scratch-limit';
          kill();
        });
    const onAbort = () => {
      ended ??= 'cancelled';
      kill();
    };
    request.signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted while the address-space limit was being measured: no event will come now.
    if (request.signal?.aborted) onAbort();
    const done = () => {
      clearTimeout(timer);
      watch?.stop();
      request.signal?.removeEventListener('abort', onAbort);
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdoutBytes += Buffer.byteLength(chunk);
      if (stdoutBytes > request.maxOutputBytes) {
        ended ??= 'output-limit';
        kill();
      } else stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    // A script that exits without reading its input closes the pipe under us.
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      done();
      resolve({ kind: 'sandbox-failed', message: `the sandbox could not start ${command}: ${error.message}` });
    });
    /** How the program ended, read from its exit, its output and bwrap's complaints. */
    const settle = (code: number | null, signal: NodeJS.Signals | null) => {
      const bwrapComplaint = useBwrap && stdout === '' ? /^bwrap: .*$/m.exec(stderr) : null;
      if (bwrapComplaint) return resolve({ kind: 'sandbox-failed', message: `the sandbox (bubblewrap) could not start: ${bwrapComplaint[0]}` });
      if (code !== 0 && OUT_OF_MEMORY.test(stderr)) return resolve({ kind: 'out-of-memory', stderr });
      resolve({ kind: 'exited', stdout, code, signal, stderr });
    };
    child.on('close', (code, signal) => {
      done();
      if (ended) return resolve({ kind: ended });
      // A host scratch folder is measured once more: a fast writer can fill it between two
      // measurements and exit before the next.
      if (watch) {
        void watch.isOver().then((over) => (over ? resolve({ kind: 'scratch-limit' }) : settle(code, signal)), () => settle(code, signal));
        return;
      }
      settle(code, signal);
    });
    child.stdin.end(request.input);
  });
}
