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
 */
import { PrivateAppender } from './private-files';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

const TOKEN_IN_URL = /([?&](?:token|sessionId)=)[^&\s"]+/gi;

export function redact(text: string): string {
  return text.replace(TOKEN_IN_URL, '$1[redacted]');
}

export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: redact(error.message), stack: error.stack ? redact(error.stack) : undefined };
  return { error: redact(String(error)) };
}

/** Writes to a file (when given) and echoes warnings and errors to stderr. */
export function createLogger(file: string | null, echo: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const format = (level: LogLevel, message: string, fields?: Record<string, unknown>) =>
    `${JSON.stringify({ time: new Date().toISOString(), level, message: redact(message), ...fields })}\n`;
  let fileFailed = false;
  const appender = file ? new PrivateAppender(file) : null;
  return {
    log(level, message, fields) {
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
