/**
 * Agent cards answered with HTTP caching (the specification's "Caching" section for cards): a
 * short `Cache-Control: public, max-age`, a strong `ETag` that is a digest of the exact body
 * bytes, and `Last-Modified`; a request whose `If-None-Match` names the current ETag gets 304
 * and no body.
 *
 * Cards change when the agents are reloaded (a description, an agent added or gone), so the
 * ETag is computed from the bytes answered, never from a version string that a reload leaves as
 * it was. Last-Modified is when this process first answered those bytes at that path (a card's
 * content has no time of its own); a changed body moves it.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Short: a reload shows within a minute to a client that honours the header. */
export const CARD_MAX_AGE_SECONDS = 60;

/** Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110 has it for this header). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export type CardResponder = (req: IncomingMessage, res: ServerResponse, path: string, card: unknown) => void;

/** One per endpoint: it remembers when each path's body last changed. */
export function createCardResponder(): CardResponder {
  const seen = new Map<string, { etag: string; lastModified: string }>();
  return (req, res, path, card) => {
    const body = Buffer.from(JSON.stringify(card), 'utf8');
    const etag = `"sha256-${createHash('sha256').update(body).digest('base64url')}"`;
    let entry = seen.get(path);
    if (entry?.etag !== etag) {
      entry = { etag, lastModified: new Date().toUTCString() };
      seen.set(path, entry);
    }
    const headers = { 'Cache-Control': `public, max-age=${CARD_MAX_AGE_SECONDS}`, ETag: etag, 'Last-Modified': entry.lastModified };
    if (matchesIfNoneMatch(req.headers['if-none-match'], etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length, ...headers });
    res.end(body);
  };
}
