/**
 * The two ways a history translation fails, as stable codes a caller branches on.
 *
 * - `UNSUPPORTED_PROVIDER`: `from` or `to` is not one of the four provider names. The MCPv2
 *   peer answers it as JSON-RPC -32010 "Unsupported provider" (docs/PEER-PROTOCOL.md, "Error codes").
 * - `INVALID_HISTORY`: the history (or the request envelope around it) does not match the
 *   source format, or holds something the translation refuses rather than loses. The peer
 *   answers it as -32602 "Invalid params". The message always starts with the path of the
 *   offending value in the caller's own document, e.g.
 *   `messages.3.content.1.type: Invalid discriminator value. Expected 'text' | 'image' | ...`,
 *   because a path is what a person fixes.
 *
 * A failure crosses a boundary as plain `{code, message}` (docs/STYLE.md 10): `toJSON()` gives
 * exactly that, so the error can be serialised without leaking a stack.
 */
import type { z } from 'zod';

export const HistoryErrorCode = {
  UnsupportedProvider: 'UNSUPPORTED_PROVIDER',
  InvalidHistory: 'INVALID_HISTORY',
} as const;
export type HistoryErrorCode = (typeof HistoryErrorCode)[keyof typeof HistoryErrorCode];

export class HistoryTranslationError extends Error {
  override readonly name = 'HistoryTranslationError';
  readonly code: HistoryErrorCode;

  constructor(code: HistoryErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  toJSON(): { code: HistoryErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export type HistoryPath = readonly PropertyKey[];

export function formatPath(path: HistoryPath): string {
  return path.length > 0 ? path.map(String).join('.') : '(root)';
}

/** An INVALID_HISTORY error whose message starts with `path: `. */
export function invalidHistory(path: HistoryPath, detail: string): HistoryTranslationError {
  return new HistoryTranslationError(HistoryErrorCode.InvalidHistory, `${formatPath(path)}: ${detail}`);
}

interface LocatedIssue {
  path: PropertyKey[];
  message: string;
}

/**
 * zod issues as one line naming every offending path under `base`.
 *
 * A union (`content: string | Block[]`) fails as one `invalid_union` issue at the union's
 * path, with each branch's issues nested inside. Reporting "Invalid input" there would hide
 * the real fault (`content.1.type`), so: branches that failed only because the value had
 * the wrong type altogether are dropped, and of the rest the one whose issue reaches deepest
 * is reported, recursively. When every branch was a plain type mismatch the union's own
 * path is reported with the types it would have taken.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], base: HistoryPath = []): string {
  return issues
    .flatMap((issue) => locate(issue, [...base]))
    .map((located) => `${formatPath(located.path)}: ${located.message}`)
    .join('; ');
}

function locate(issue: z.core.$ZodIssue, base: PropertyKey[]): LocatedIssue[] {
  const path = [...base, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) {
    return [{ path, message: issue.message }];
  }
  const meaningful = issue.errors.filter(
    (branch) => !branch.every((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
  );
  if (meaningful.length === 0) {
    const expected = new Set(
      issue.errors.flatMap((branch) => branch.flatMap((inner) => (inner.code === 'invalid_type' ? [String(inner.expected)] : []))),
    );
    return [{ path, message: `Invalid input: expected ${[...expected].join(' or ')}` }];
  }
  const depth = (branch: z.core.$ZodIssue[]): number => Math.max(...branch.map((inner) => inner.path.length));
  let best = meaningful[0] ?? [];
  for (const branch of meaningful) if (depth(branch) > depth(best)) best = branch;
  return best.flatMap((inner) => locate(inner, path));
}

/** Parse with `schema`, or throw INVALID_HISTORY naming every offending path under `base`. */
export function parseOrRefuse<T extends z.ZodType>(schema: T, value: unknown, base: HistoryPath = []): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new HistoryTranslationError(HistoryErrorCode.InvalidHistory, describeIssues(parsed.error.issues, base));
  }
  return parsed.data;
}
