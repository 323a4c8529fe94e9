/**
 * The `a2a.pins.*` commands: the keys remote A2A agents' cards are pinned to, per origin
 * (protocols/a2a/client/a2a-pins.ts). A changed key is refused at the call until a person accepts
 * it here; so these are a person's commands only: a protocol caller (an MCP host, an A2A peer)
 * must not be able to talk the plane into trusting a key.
 */
import type { CommandHandlers } from './dispatch';
import type { CallContext } from './dispatch';
import { PlaneError } from '../base/plane-error';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { A2aPins, A2aPinsError } from '../protocols/a2a/client/a2a-pins';

type A2aClientCommands = 'a2a.pins.list' | 'a2a.pins.accept';

function personOnly(context: CallContext): void {
  if (context.caller) throw new PlaneError(ErrorCode.Forbidden, "only a person at this plane can see or change the pinned keys of remote A2A agents' cards");
}

function refusals<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof A2aPinsError) throw new PlaneError(error.message.startsWith('no key') ? ErrorCode.NotFound : ErrorCode.Conflict, error.message);
    throw error;
  }
}

export function a2aClientHandlers(dataDir: string): Pick<CommandHandlers, A2aClientCommands> {
  const pins = new A2aPins(dataDir);
  return {
    'a2a.pins.list': (_request, context) => {
      personOnly(context);
      return refusals(() => ({ pins: pins.list() }));
    },
    'a2a.pins.accept': ({ origin }, context) => {
      personOnly(context);
      // The pins are kept per origin; a URL with a path names the same origin.
      return refusals(() => pins.accept(new URL(origin).origin));
    },
  };
}
