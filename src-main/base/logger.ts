/**
 * The plane's operator log: one JSON object per line. It is the place internal detail goes
 * (a handler's stack, a peer's exit code) so that answers to callers can stay fixed sentences.
 * Nothing secret is ever passed to it: tokens and credentials are not logged by construction
 * (callers log ids, never the values), and `redact` scrubs the query-string token form as a
 * second lock for URLs that reach a log line.
 *
 * The file is opened with O_APPEND|O_NOFOLLOW and kept 0600, and held open between lines, its
 * name looked at again once a second (PrivateAppender, private-files.ts): a symlink planted at
 * the log's path is refused, never appended through to another file, and a log rotated away
 * is followed by a new file within a second.
 *
 * Lines below the log's level are dropped before they are formatted. The level is `info` unless
 * AGENTPLANE_LOG_LEVEL says otherwise (`debug` keeps everything, `warn` or `error` less). Debug
 * lines are the per-request ones (a peer logs each request it answers): kept by default they cost
 * a loaded peer about a tenth of its throughput (bench peer-ping's client against one peer, c=16,
 * five alternating runs: 3,861 req/s with them, 4,250 without) and grow its log by a line per call.
 */
import { PrivateAppender } from './private-files';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The environment variable that sets the level of every log the plane and its peers write. */
export const LOG_LEVEL_VARIABLE = 'AGENTPLANE_LOG_LEVEL';
const DEFAULT_LEVEL: LogLevel = 'info';

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /** Whether a line of this level would be written; a logger without it writes every level. */
  enabled?(level: LogLevel): boolean;
}

/**
 * The level `env` asks for: AGENTPLANE_LOG_LEVEL (any case), else `info`. A value that is no
 * level is not fatal (a log setting must not stop the plane): the default is used, and
 * `problem` says what was wrong, for the logger to say once.
 */
export function logLevelFrom(env: NodeJS.ProcessEnv = process.env): { level: LogLevel; problem?: string } {
  const raw = env[LOG_LEVEL_VARIABLE];
  if (raw === undefined || raw.trim() === '') return { level: DEFAULT_LEVEL };
  const wanted = raw.trim().toLowerCase();
  const level = LOG_LEVELS.find((l) => l === wanted);
  if (level) return { level };
  return { level: DEFAULT_LEVEL, problem: `${LOG_LEVEL_VARIABLE}=${JSON.stringify(raw)} is not a log level (use ${LOG_LEVELS.join(', ')}); logging at ${DEFAULT_LEVEL}` };
}

const TOKEN_IN_URL = /([?&](?:token|sessionId)=)[^&\s"]+/gi;

export function redact(text: string): string {
  return text.replace(TOKEN_IN_URL, '$1[redacted]');
}

export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: redact(error.message), stack: error.stack ? redact(error.stack) : undefined };
  return { error: redact(String(error)) };
}

/**
 * Writes lines of `level` and above to a file (when given) and echoes warnings and errors (when
 * at or above `level`) to stderr. `level` defaults to what AGENTPLANE_LOG_LEVEL says.
 */
export function createLogger(file: string | null, echo: (line: string) => void = (l) => process.stderr.write(l), level?: LogLevel): Logger {
  const asked = level === undefined ? logLevelFrom() : { level };
  const threshold = LOG_LEVELS.indexOf(asked.level);
  const enabled = (l: LogLevel) => LOG_LEVELS.indexOf(l) >= threshold;
  const format = (level: LogLevel, message: string, fields?: Record<string, unknown>) =>
    `${JSON.stringify({ time: new Date().toISOString(), level, message: redact(message), ...fields })}\n`;
  let fileFailed = false;
  const appender = file ? new PrivateAppender(file) : null;
  if (asked.problem) echo(format('warn', asked.problem));
  return {
    enabled,
    log(level, message, fields) {
      if (!enabled(level)) return;
      const line = format(level, message, fields);
      if (appender) {
        try {
          appender.append(line);
          fileFailed = false;
        } catch (error) {
          // A full disk, or a link planted at the log's path, must not take the plane down
          // through its own log. Said once on stderr per run of failures, so the person learns
          // the log is not being written; warnings and errors still reach stderr below.
          if (!fileFailed) echo(format('warn', `cannot write the log ${file}`, { error: redact(error instanceof Error ? error.message : String(error)) }));
          fileFailed = true;
        }
      }
      if (level === 'warn' || level === 'error') echo(line);
    },
  };
}

export const silentLogger: Logger = { log() {} };
