/**
 * Where a plane's start-up time goes, for bench/serve-startup.bench.ts. With
 * AGENTPLANE_STARTUP_TRACE=1 in the environment each mark writes one line to stderr,
 * `agentplane-startup <phase> <ms>`, the milliseconds counted from the process's own start
 * (performance.now(), whose origin is the process's time origin), so the first mark also says
 * what booting Node and loading the modules cost. Off by default: without the variable a mark
 * writes nothing. The line carries a phase name and a number only, never a path, a URL or a
 * token, so turning it on cannot put a secret on stderr.
 */

export const STARTUP_TRACE_ENV = 'AGENTPLANE_STARTUP_TRACE';
export const STARTUP_TRACE_PREFIX = 'agentplane-startup';

/** Phase names are fixed words chosen by the caller: letters, digits, `.` and `-`. */
const PHASE = /^[a-z0-9.-]+$/;

/** Marks the end of a start-up phase (when the variable is set). */
export function startupMark(phase: string, env: NodeJS.ProcessEnv = process.env, write: (line: string) => void = (l) => process.stderr.write(l)): void {
  if (env[STARTUP_TRACE_ENV] !== '1') return;
  if (!PHASE.test(phase)) throw new Error(`a start-up phase is named in lowercase letters, digits, '.' and '-': ${JSON.stringify(phase)}`);
  write(`${STARTUP_TRACE_PREFIX} ${phase} ${performance.now().toFixed(1)}\n`);
}
