/**
 * The plane's operator log: one JSON object per line. It is the place internal detail goes
 * (a handler's stack, a peer's exit code) so that answers to callers can stay fixed sentences.
 * Nothing secret is ever passed to it: tokens and credentials are not logged by construction
 * (callers log ids, never the values), and `redact` scrubs the query-string token form as a
 * second lock for URLs that reach a log line.
 */
import { appendFileSync } from 'node:fs';

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
  return {
    log(level, message, fields) {
      const line = `${JSON.stringify({ time: new Date().toISOString(), level, message: redact(message), ...fields })}\n`;
      if (file) {
        try {
          appendFileSync(file, line, { mode: 0o600 });
        } catch {
          // A full disk must not take the plane down through its own log.
        }
      }
      if (level === 'warn' || level === 'error') echo(line);
    },
  };
}

export const silentLogger: Logger = { log() {} };
