/**
 * What the pool says about a server, in views, errors and logs: a URL without its user info, a
 * line shortened, every declared secret value replaced by `[redacted]` (env and header values go
 * to the transport only), and an error's message with the cause fetch hides.
 */
import type { McpServerConfig } from '../../../../src-shared/protocol/mcp';
import { DeadlinePassed } from './mcp-deadline';

export const MAX_LINE_CHARS = 500;

/** Replaces each declared env or header value (of 4 characters or more) in a text with `[redacted]`. */
export function secretRedactor(config: McpServerConfig): (text: string) => string {
  const values = Object.values(config.transport === 'stdio' ? config.env : config.headers).filter((v) => v.length >= 4);
  // Longest first, so a secret containing another is replaced whole.
  values.sort((a, b) => b.length - a.length);
  return (text) => values.reduce((out, value) => out.split(value).join('[redacted]'), text);
}

/** A URL as shown and keyed: without user info (a password in a URL is a credential). */
export function displayUrl(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}

/** One line of at most `max` characters. */
export function shorten(text: string, max = MAX_LINE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function messageOf(error: unknown): string {
  if (error instanceof DeadlinePassed) return error.message;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    let text = `${error.message}${typeof code === 'number' ? ` (code ${code})` : ''}`;
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, a TLS error) is a cause or two down.
    let cause = (error as { cause?: unknown }).cause;
    for (let depth = 0; depth < 3 && cause instanceof Error; depth += 1) {
      const detail = (cause as { code?: unknown }).code ?? cause.message;
      if (typeof detail === 'string' && detail && !text.includes(detail)) text += ` (${detail})`;
      cause = (cause as { cause?: unknown }).cause;
    }
    return text;
  }
  return String(error);
}

/** A view without its unset members. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
