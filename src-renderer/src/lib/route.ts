/**
 * Where the window is, as a hash route (`#/runs/run-…/42`), so a reload (or the back button)
 * returns to the same view. Only navigation lives here: everything shown comes from the plane.
 */
import { isRunId, PeerIdSchema } from '../../../src-shared/vocabulary/ids';
import { sections, type SectionId } from '../sections/sections';

export interface Route {
  section: SectionId;
  /** Runs: the run whose timeline is open (as the address has it: maybe no run id at all); Editor sessions (acp): the session's run. */
  runId: string | null;
  /** Runs: the record selected in the timeline. */
  seq: number | null;
  /** Peers: the peer whose detail is open. */
  peerId: string | null;
  /**
   * Runs: the run compared with `runId` step by step (`#/runs/<a>/diff/<b>`, runs.diff); absent
   * on every other address, so a route that compares nothing reads as it always did.
   */
  compareWith?: string;
}

export const DEFAULT_ROUTE: Route = { section: 'peers', runId: null, seq: null, peerId: null };

/** `#/runs/<a>/diff/<b>`: the word between the two runs of a comparison. */
const DIFF_SEGMENT = 'diff';

/** Whether two routes show the same view (the selected record aside). */
export function sameView(a: Route, b: Route): boolean {
  return a.section === b.section && a.runId === b.runId && a.peerId === b.peerId && a.compareWith === b.compareWith;
}

const isSection = (value: string | undefined): value is SectionId => sections.some((s) => s.id === value);

/** Whether a hash is a route at all (`#/…`); an in-page anchor such as `#content` is not. */
export function isRouteHash(hash: string): boolean {
  return hash === '' || hash === '#' || hash.startsWith('#/');
}

export function parseRoute(hash: string): Route {
  let parts: string[];
  try {
    parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    // A malformed escape (`#/runs/%E0`, typed or pasted) is no route; it must not stop the page.
    return DEFAULT_ROUTE;
  }
  const [section, a, b, c] = parts;
  if (!isSection(section)) return DEFAULT_ROUTE;
  if (section === 'runs' && a && b === DIFF_SEGMENT && c) return { section, runId: a, seq: null, peerId: null, compareWith: c };
  // A run id that is no run id stays in the route, so the view can say there is no such run.
  if (section === 'runs' && a) {
    const seq = isRunId(a) && b !== undefined && /^\d+$/.test(b) ? Number(b) : null;
    return { section, runId: a, seq, peerId: null };
  }
  if (section === 'acp' && a && isRunId(a)) return { section, runId: a, seq: null, peerId: null };
  if (section === 'peers' && a && PeerIdSchema.safeParse(a).success) return { section, runId: null, seq: null, peerId: a };
  return { section, runId: null, seq: null, peerId: null };
}

export function formatRoute(route: Route): string {
  if (route.section === 'runs' && route.runId && route.compareWith) return `#/runs/${encodeURIComponent(route.runId)}/${DIFF_SEGMENT}/${encodeURIComponent(route.compareWith)}`;
  if (route.section === 'runs' && route.runId) return `#/runs/${encodeURIComponent(route.runId)}${route.seq !== null ? `/${route.seq}` : ''}`;
  if (route.section === 'acp' && route.runId) return `#/acp/${route.runId}`;
  if (route.section === 'peers' && route.peerId) return `#/peers/${route.peerId}`;
  return `#/${route.section}`;
}
