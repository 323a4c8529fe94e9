/**
 * How a payload whose data key was destroyed reads (docs/ERASURE.md): a record's opened body
 * holds `erased` (when, by whom, why) where its payload was. Plain functions with no imports, so
 * the renderer reads them without pulling in any schema.
 */
/** An opened record body's erasure (docs/ERASURE.md): `erased` when its payload's key was destroyed. */
export function erasureOfBody(body: Record<string, unknown>): { at: string; by: string; reason: string } | null {
  const erased = body.erased as { at?: unknown; by?: unknown; reason?: unknown } | undefined;
  if (erased === undefined || erased === null || typeof erased !== 'object') return null;
  return { at: String(erased.at ?? ''), by: String(erased.by ?? ''), reason: String(erased.reason ?? '') };
}

/** How an erased payload reads, in the timeline, the CLI and the inspector: when, by whom, why. */
export function describeErasure(erased: { at: string; by: string; reason: string }): string {
  return `erased on ${erased.at.slice(0, 10)}, by ${erased.by}, because ${erased.reason}`;
}
