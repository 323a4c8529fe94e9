/** Renderer entry: pick the transport for this host, build the store, render the shell. */
import { StrictMode, useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { createPlaneClient } from '../../src-shared/ipc/client';
import { App } from './app';
import { parseRoute } from './lib/route';
import { loadSection } from './sections/section-chunks';
import { createAppStore } from './store/app-store';
import { browserEnv } from './store/browser-env';
import { StoreContext } from './store/store-context';
import { selectTransport } from './transport/select-transport';
import './styles.css';

/**
 * How long the first render waits for the view on screen. The view is its own chunk; rendered
 * before it is here, the first frame is the sidebar and a "Loading…" line, and the view with
 * its rows is a second render, layout and paint after the chunk has come. Rendered once it is
 * here, the first frame is the view itself: measured with bench renderer-load (six alternating
 * runs each) the Peers view's first rows showed at a median 209 ms instead of 223, with no
 * placeholder drawn in between. The chunk comes from loopback or from the app's own files, so it
 * is normally there within tens of milliseconds; the bound only keeps a slow one (a machine
 * under load) from leaving the page blank: past it the shell renders and the view suspends as
 * it did before.
 */
const FIRST_VIEW_WAIT_MS = 500;

/** Runs `onCommit` once React has committed the first frame (an effect runs after its commit). */
function FirstCommit({ onCommit }: { onCommit: () => void }): null {
  useEffect(onCommit, [onCommit]);
  return null;
}

const root = createRoot(document.getElementById('root') as HTMLElement);
const choice = selectTransport();
if ('error' in choice) {
  root.render(
    <main className="fatal">
      <h1>AgentPlane</h1>
      <p role="alert">{choice.error}</p>
    </main>,
  );
} else {
  const route = parseRoute(window.location.hash);
  // The view on screen is its own chunk: its fetch starts now, beside the first calls to the
  // plane, and the first render waits for it (FIRST_VIEW_WAIT_MS at most). A chunk that fails
  // renders the shell at once; the view then shows the failure (section-view.tsx) and retries.
  const viewChunk = loadSection(route.section);
  const store = createAppStore(createPlaneClient(choice.transport), browserEnv(), route);
  // The first look (the view's own rows) leaves now, before React's first render, beside the
  // chunk's fetch. The event stream opens now too where its first sync is what asks for the
  // view's rows, so the socket's connect and the plane's answers run beside the render instead
  // of after it; on the Peers view, which the first look fills, it opens after the first commit
  // (app-store.ts `start`). The page lives as long as the store, so the stream's stop is never
  // needed.
  let committed!: () => void;
  const firstCommit = new Promise<void>((resolve) => (committed = resolve));
  store.getState().start({ connectAfter: firstCommit });
  // The token moves out of the address once the first frame is up (web-transport.ts says why).
  void firstCommit.then(choice.afterFirstFrame);
  const render = () =>
    root.render(
      <StrictMode>
        <StoreContext.Provider value={store}>
          <App />
          <FirstCommit onCommit={committed} />
        </StoreContext.Provider>
      </StrictMode>,
    );
  const waited = new Promise((resolve) => window.setTimeout(resolve, FIRST_VIEW_WAIT_MS));
  void Promise.race([viewChunk, waited]).then(render, render);
}
