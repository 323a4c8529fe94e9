/** The window's services for the store: timers, the clock, file saving, notifications, storage. */
import { saveTextFile } from '../lib/save-file';
import type { StoreEnv } from './store-types';

function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export function browserEnv(): StoreEnv {
  const supported = typeof window.Notification === 'function';
  return {
    now: () => Date.now(),
    setTimer: (fn, ms) => window.setTimeout(fn, ms),
    clearTimer: (handle) => window.clearTimeout(handle as number),
    saveFile: (fileName, content) => saveTextFile(fileName, content),
    notifications: {
      permission: () => (supported ? window.Notification.permission : 'unsupported'),
      request: async () => (supported ? window.Notification.requestPermission() : 'unsupported'),
      show(title, body) {
        if (!supported) return;
        try {
          const notification = new window.Notification(title, { body, tag: 'agentplane-approvals' });
          notification.onclick = () => {
            window.focus();
            window.location.hash = '#/approvals';
          };
        } catch {
          // Some hosts allow the permission but refuse the constructor (service-worker only).
        }
      },
    },
    storage: safeStorage(),
  };
}
