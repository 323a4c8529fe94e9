/**
 * One renderer, two hosts: inside Electron the preload has put `window.agentplane` there; in a
 * browser it is absent and the web bridge is used. Nothing above this file knows which.
 */
import type { ContractTransport } from '../../../src-shared/ipc/client';
import type { PreloadApi } from '../../../src-shared/ipc/preload-api';
import { createElectronTransport } from './electron-transport';
import { createWebTransport, takeTokenFromLocation } from './web-transport';

declare global {
  interface Window {
    agentplane?: PreloadApi;
  }
}

/** `afterFirstFrame`: what the host has left to do once the first frame is on screen (the web host keeps its token). */
export type TransportChoice = { transport: ContractTransport; host: 'electron' | 'web'; afterFirstFrame: () => void } | { error: string };

export function selectTransport(): TransportChoice {
  if (window.agentplane) return { transport: createElectronTransport(window.agentplane), host: 'electron', afterFirstFrame: () => undefined };
  const found = takeTokenFromLocation();
  if (!found) {
    return { error: 'This page needs the address AgentPlane printed when it started (the AGENTPLANE_UI_URL line, with its token).' };
  }
  return { transport: createWebTransport(found.token), host: 'web', afterFirstFrame: found.keep };
}
