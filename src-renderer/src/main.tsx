/** Renderer entry: pick the transport for this host, build the store, render the shell. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createPlaneClient } from '../../src-shared/ipc/client';
import { App } from './app';
import { parseRoute } from './lib/route';
import { prefetchSection } from './sections/section-chunks';
import { createAppStore } from './store/app-store';
import { browserEnv } from './store/browser-env';
import { StoreContext } from './store/store-context';
import { selectTransport } from './transport/select-transport';
import './styles.css';

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
  // plane, rather than after the shell's first render asks for it.
  prefetchSection(route.section);
  const store = createAppStore(createPlaneClient(choice.transport), browserEnv(), route);
  // The event stream opens now, before React's first render, rather than from an effect after
  // it: its first sync is what asks for the view's rows, so the socket's connect and the plane's
  // answers run beside the render instead of after it (bench/renderer-load.bench.ts). The page
  // lives as long as the store, so the stream's stop is never needed.
  store.getState().start();
  root.render(
    <StrictMode>
      <StoreContext.Provider value={store}>
        <App />
      </StoreContext.Provider>
    </StrictMode>,
  );
}
