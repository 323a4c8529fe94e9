/**
 * Navigation, the command palette, announcements for screen readers, and the UI preferences
 * (the only state the renderer keeps of its own, in localStorage). Navigation mirrors the hash
 * route (lib/route.ts), so a reload returns to the same view.
 */
import { DEFAULT_ROUTE, sameView, type Route } from '../lib/route';
import type { SectionId } from '../sections/sections';
import type { SliceDeps } from './store-types';

const PREFS_KEY = 'agentplane.preferences';

export interface Preferences {
  /** System notifications for new approvals. */
  notifications: boolean;
}

const DEFAULT_PREFERENCES: Preferences = { notifications: true };

export interface UiSlice {
  section: SectionId;
  route: Route;
  paletteOpen: boolean;
  /** The latest polite announcement (an aria-live region reads it). */
  announcement: { text: string; nonce: number };
  preferences: Preferences;
  notificationPermission: NotificationPermission | 'unsupported';
  setSection(section: SectionId): void;
  navigate(route: Partial<Route> & { section: SectionId }): void;
  openRun(runId: string, seq?: number | null): void;
  /** Opens the step-by-step comparison of run a with run b. */
  openDiff(a: string, b: string): void;
  setPaletteOpen(open: boolean): void;
  announce(text: string): void;
  setNotifications(on: boolean): Promise<void>;
}

function loadPreferences(storage: SliceDeps['env']['storage']): Preferences {
  try {
    const raw = storage?.getItem(PREFS_KEY);
    if (!raw) return DEFAULT_PREFERENCES;
    const parsed = JSON.parse(raw) as Partial<Preferences>;
    return { notifications: typeof parsed.notifications === 'boolean' ? parsed.notifications : DEFAULT_PREFERENCES.notifications };
  } catch {
    return DEFAULT_PREFERENCES;
  }
}

export function createUiSlice({ set, get, env }: SliceDeps, initialRoute: Route): UiSlice {
  let nonce = 0;
  return {
    section: initialRoute.section,
    route: initialRoute,
    paletteOpen: false,
    announcement: { text: '', nonce: 0 },
    preferences: loadPreferences(env.storage),
    notificationPermission: env.notifications.permission(),

    setSection(section) {
      get().navigate({ section });
    },

    navigate(partial) {
      const route: Route = { ...DEFAULT_ROUTE, ...partial };
      const current = get().route;
      if (sameView(route, current) && route.seq === current.seq) return;
      set({ route, section: route.section });
      // Editor sessions: a session page follows its session; the list (or another section) lets it go.
      if (route.section === 'acp' && route.runId) get().openAcpSession(route.runId);
      else if (get().acpOpen.runId) get().closeAcpSession();
      // A comparison reads its two runs' steps (runs.diff), not a timeline's pages.
      if (route.section === 'runs' && route.runId && route.compareWith) void get().loadDiff(route.runId, route.compareWith);
      else if (route.section === 'runs' && route.runId) get().openTimeline(route.runId, route.seq);
      else if (get().timeline.runId && !(route.section === 'runs' && route.runId)) {
        // Leaving a timeline for another section keeps it loaded (Back returns to it fast);
        // leaving it for the runs list closes it.
        if (route.section === 'runs') get().closeTimeline();
      }
    },

    openRun(runId, seq = null) {
      get().navigate({ section: 'runs', runId, seq });
    },

    openDiff(a, b) {
      get().navigate({ section: 'runs', runId: a, seq: null, compareWith: b });
    },

    setPaletteOpen(open) {
      set({ paletteOpen: open });
    },

    announce(text) {
      set({ announcement: { text, nonce: ++nonce } });
    },

    async setNotifications(on) {
      let permission = env.notifications.permission();
      if (on && permission === 'default') permission = await env.notifications.request();
      const preferences = { ...get().preferences, notifications: on };
      set({ preferences, notificationPermission: permission });
      try {
        env.storage?.setItem(PREFS_KEY, JSON.stringify(preferences));
      } catch {
        // Storage full or disabled: the preference holds for this window only.
      }
    },
  };
}
