/**
 * One build for the three bundles. Main (Electron entry and the CLI) stays ESM with its npm
 * dependencies external; the preload is one CommonJS file with everything bundled in, so it
 * runs under `sandbox: true`; the renderer is a Vite React app rooted at src-renderer, minified,
 * with one lazily loaded chunk per view.
 */
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rolldownOptions: {
        input: {
          index: resolve('src-main/electron/main.ts'),
          cli: resolve('src-main/cli/main.ts'),
          // The process that hosts the plane (a utilityProcess in the app, a child process elsewhere).
          'plane-host': resolve('src-main/electron/plane-host-entry.ts'),
          // A worker thread's entry (journal-workers.ts starts it from out/main/journal-worker.js).
          'journal-worker': resolve('src-main/journal/journal-worker.ts'),
          // The acp tap's journal worker thread (observation-worker.ts starts out/main/acp-tap-worker.js).
          'acp-tap-worker': resolve('src-main/protocols/acp/acp-tap-worker.ts'),
          // The demo ACP agent as its own process (demo-agent-command.ts starts out/main/acp-demo-agent.js).
          'acp-demo-agent': resolve('src-main/protocols/acp/demo/demo-agent.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve('src-preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src-renderer',
    base: './',
    plugins: [react()],
    build: {
      outDir: resolve('out/renderer'),
      emptyOutDir: true,
      // electron-vite's renderer preset leaves the bundle unminified; the page is parsed on
      // every window and every browser tab of `serve`, so ship it minified (issue 16).
      minify: true,
      rolldownOptions: {
        input: { index: resolve('src-renderer/index.html') },
        output: {
          // Each view is a dynamic import (sections/section-chunks.ts), so it is its own chunk,
          // named for its module: assets/peers-section-<hash>.js. Names stay readable in the
          // bench's breakdown and in a browser's network panel.
          entryFileNames: 'assets/[name]-[hash].js',
          chunkFileNames: 'assets/[name]-[hash].js',
        },
      },
    },
  },
});
