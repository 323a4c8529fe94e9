/**
 * The shell: sidebar, the selected section, the status bar, the command palette, and the
 * global keys (Alt+1…9 sections, Ctrl/Cmd+K palette). The hash route and the store are kept in
 * step here: a click updates the address (so a reload returns to the view), and the back
 * button or an edited address updates the store.
 */
import { lazy, Suspense, useEffect } from 'react';
import { Announcer } from './components/announcer';
import { Sidebar } from './components/sidebar';
import { SectionView } from './components/section-view';
import { StatusBar } from './components/status-bar';
import { formatRoute, isRouteHash, parseRoute, sameView } from './lib/route';
import { sections } from './sections/sections';
import { useApp, useAppStore } from './store/store-context';

// The palette is opened by Ctrl/Cmd+K, never on the first paint: its code is a chunk of its own.
const CommandPalette = lazy(() => import('./components/command-palette').then((m) => ({ default: m.CommandPalette })));

function useRouteSync() {
  const store = useAppStore();
  useEffect(() => {
    const onHash = () => {
      if (isRouteHash(window.location.hash)) store.getState().navigate(parseRoute(window.location.hash));
    };
    window.addEventListener('hashchange', onHash);
    // The address may have changed before this listener existed: the page's first frame waits
    // for its view's chunk (main.tsx), and a link followed or an address edited meanwhile fired
    // its hashchange at nobody. The store took its route from the address at start, so any
    // difference now is such a change, applied here.
    const address = window.location.hash;
    if (isRouteHash(address) && formatRoute(parseRoute(address)) !== formatRoute(store.getState().route)) onHash();
    const unsubscribe = store.subscribe((state, previous) => {
      // The selected record is part of the address, replaced rather than pushed (arrowing
      // through a timeline must not fill the history).
      if (state.timeline.selectedSeq !== previous.timeline.selectedSeq && state.route.section === 'runs' && state.route.runId === state.timeline.runId && !state.route.compareWith && state.timeline.selectedSeq !== null) {
        store.setState({ route: { ...state.route, seq: state.timeline.selectedSeq } });
        return;
      }
      if (state.route === previous.route) return;
      const hash = formatRoute(state.route);
      if (hash === window.location.hash) return;
      if (sameView(state.route, previous.route)) window.history.replaceState(null, '', hash);
      else window.history.pushState(null, '', hash);
    });
    return () => {
      window.removeEventListener('hashchange', onHash);
      unsubscribe();
    };
  }, [store]);
}

export function App() {
  const setSection = useApp((s) => s.setSection);
  const paletteOpen = useApp((s) => s.paletteOpen);
  const setPaletteOpen = useApp((s) => s.setPaletteOpen);

  // The store's first look and event stream are started by main.tsx (app-store.ts `start`).
  useRouteSync();

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setPaletteOpen(!paletteOpen);
        return;
      }
      if (!event.altKey || event.ctrlKey || event.metaKey) return;
      const index = Number(event.key) - 1;
      const section = sections[index];
      if (!section) return;
      event.preventDefault();
      setSection(section.id);
      // Every section's button is always rendered, so focus can move before React re-renders.
      document.getElementById(`nav-${section.id}`)?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [setSection, paletteOpen, setPaletteOpen]);

  return (
    <div className="shell">
      <a
        className="skip-link"
        href="#content"
        onClick={(event) => {
          // The address holds the route; the skip link moves focus without touching it.
          event.preventDefault();
          document.getElementById('section-heading')?.focus();
        }}
      >
        Skip to content
      </a>
      <Sidebar />
      <SectionView />
      <StatusBar />
      <Announcer />
      {paletteOpen ? (
        <Suspense fallback={null}>
          <CommandPalette />
        </Suspense>
      ) : null}
    </div>
  );
}
