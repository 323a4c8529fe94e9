// lint-as: src-renderer/src/bad.lint-fixture.ts
// expect: only src-main/electron and src-preload import electron
import { ipcRenderer } from 'electron';
export const x = ipcRenderer;
