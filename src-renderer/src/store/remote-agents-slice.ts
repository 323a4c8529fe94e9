/**
 * Remote agents: the remote A2A agents this plane's runs called (`a2a.remotes`, folded by the
 * plane from the journal's `a2a` effects), each card's standing from the pins file, and the one
 * action on them, accepting a changed key (`a2a.pins.accept`).
 *
 * The list is read when the view is shown and after an accept: a pin is the plane's state, not
 * the journal's, and a new call to a remote lands in the journal without naming a remote, so
 * the view also re-reads when a journal change arrives while it is shown (app-store.ts).
 *
 * Accepting a key is a trust decision (the same change is what an impersonated host looks
 * like); the section asks for a confirmation before it calls this.
 */
import type { A2aRemote } from '../../../src-shared/protocol/a2a';
import type { SliceDeps } from './store-types';

export interface RemoteAgentsSlice {
  remotes: A2aRemote[];
  remotesLoaded: boolean;
  /** Why the last read failed (the list shown is then the one before). */
  remotesError: string | null;
  /** origin → an accept being sent. */
  remoteAccepting: Record<string, boolean | undefined>;
  /** origin → the plane's refusal of the last accept, in its words. */
  remoteAcceptErrors: Record<string, string | undefined>;
  refreshRemotes(): Promise<void>;
  /** Makes the pending key of `origin` its pin; true when the plane took it. */
  acceptRemoteKey(origin: string): Promise<boolean>;
}

export function createRemoteAgentsSlice({ set, get, client }: SliceDeps): RemoteAgentsSlice {
  let reading: Promise<void> | null = null;
  let again = false;
  return {
    remotes: [],
    remotesLoaded: false,
    remotesError: null,
    remoteAccepting: {},
    remoteAcceptErrors: {},

    refreshRemotes() {
      // One read in flight; a call meanwhile costs one more read after it, not one each.
      if (reading) {
        again = true;
        return reading;
      }
      reading = (async () => {
        do {
          again = false;
          const result = await client.tryCall('a2a.remotes', {});
          if (result.ok) set({ remotes: result.value.remotes, remotesLoaded: true, remotesError: null });
          else set({ remotesError: result.error.message });
        } while (again);
      })().finally(() => {
        reading = null;
      });
      return reading;
    },

    async acceptRemoteKey(origin) {
      if (get().remoteAccepting[origin]) return false;
      set((s) => ({ remoteAccepting: { ...s.remoteAccepting, [origin]: true }, remoteAcceptErrors: { ...s.remoteAcceptErrors, [origin]: undefined } }));
      const result = await client.tryCall('a2a.pins.accept', { origin });
      set((s) => ({ remoteAccepting: { ...s.remoteAccepting, [origin]: undefined } }));
      if (result.ok) get().announce(`Accepted the new key ${result.value.keyId} for ${origin}.`);
      else {
        set((s) => ({ remoteAcceptErrors: { ...s.remoteAcceptErrors, [origin]: result.error.message } }));
        get().announce(`Could not accept the new key for ${origin}: ${result.error.message}`);
      }
      await get().refreshRemotes();
      return result.ok;
    },
  };
}
