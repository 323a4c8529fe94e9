/**
 * Each section's view is its own chunk, loaded when first needed, so the first paint waits
 * only for the shell and the view on screen (docs/PERFORMANCE.md: the renderer loads at once). The
 * sidebar, the keys and the heading never wait for a chunk: they come from sections.ts.
 *
 * A chunk is fetched at most once: `loadSection` keeps the promise, so prefetching (hover,
 * focus, idle) and rendering share one download. A failed fetch is forgotten, so the next
 * attempt (a reload of the view) fetches again instead of repeating the old failure.
 */
import { lazy, type ComponentType } from 'react';
import type { SectionId } from './sections';

export type SectionComponent = ComponentType<{ empty: string }>;

const loaders: Record<SectionId, () => Promise<SectionComponent>> = {
  peers: () => import('./peers-section').then((m) => m.PeersSection),
  runs: () => import('./runs-section').then((m) => m.RunsSection),
  approvals: () => import('./approvals-section').then((m) => m.ApprovalsSection),
  spend: () => import('./spend-section').then((m) => m.SpendSection),
  sessions: () => import('./sessions-section').then((m) => m.SessionsSection),
  acp: () => import('./acp-section').then((m) => m.AcpSection),
  mcp: () => import('./mcp-section').then((m) => m.McpSection),
  settings: () => import('./settings-section').then((m) => m.SettingsSection),
  remotes: () => import('./remote-agents-section').then((m) => m.RemoteAgentsSection),
};

const loading = new Map<SectionId, Promise<SectionComponent>>();
const loaded = new Map<SectionId, SectionComponent>();
const views = new Map<SectionId, SectionComponent>();

/** Starts (or joins) the fetch of a section's chunk; resolves with its view. */
export function loadSection(id: SectionId): Promise<SectionComponent> {
  let promise = loading.get(id);
  if (!promise) {
    promise = loaders[id]().then(
      (component) => {
        loaded.set(id, component);
        return component;
      },
      (error: unknown) => {
        loading.delete(id);
        throw error;
      },
    );
    loading.set(id, promise);
  }
  return promise;
}

/** A prefetch: the same fetch as a render, its failure left for the render to show. */
export function prefetchSection(id: SectionId): void {
  loadSection(id).catch(() => undefined);
}

/**
 * The component to render for a section, the same one every time for the same id (a new
 * component type would remount the view and lose what was typed into it). A view whose chunk
 * is already here renders at once; otherwise it is a lazy component that suspends until it is.
 */
export function sectionView(id: SectionId): SectionComponent {
  let view = views.get(id);
  if (!view) {
    view =
      loaded.get(id) ??
      lazy(async () => {
        try {
          return { default: await loadSection(id) };
        } catch (error) {
          // React keeps a lazy component's failure for good: forget this one, so the next
          // render of the section (after moving away and back) makes a new one that fetches again.
          views.delete(id);
          throw error;
        }
      });
    views.set(id, view);
  }
  return view;
}

/**
 * Once the view on screen is here and the browser is idle, fetches every other view, so
 * Alt+1…9 and clicks switch without a wait. Never before: the prefetch must not compete with
 * the first view for the network or the parser. Returns a cancel.
 */
export function prefetchOthersWhenIdle(first: SectionId, ids: readonly SectionId[]): () => void {
  let cancel = () => {};
  let cancelled = false;
  const run = () => ids.forEach(prefetchSection);
  loadSection(first)
    .catch(() => undefined)
    .then(() => {
      if (cancelled) return;
      if (typeof window.requestIdleCallback === 'function') {
        const handle = window.requestIdleCallback(run, { timeout: 5_000 });
        cancel = () => window.cancelIdleCallback(handle);
      } else {
        const handle = window.setTimeout(run, 1_000);
        cancel = () => window.clearTimeout(handle);
      }
    })
    .catch(() => undefined);
  return () => {
    cancelled = true;
    cancel();
  };
}
