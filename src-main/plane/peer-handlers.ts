/** The peers' commands: the plane's supervisor and registry, by click or CLI. */
import type { CommandsOf } from '../../src-shared/ipc/contract';
import type { CommandHandlers } from './dispatch';
import type { PeerSupervisor } from '../peers/peer-supervisor';

type PeerCommands = CommandsOf<'peers'>;

export function peerHandlers(peers: PeerSupervisor): Pick<CommandHandlers, PeerCommands> {
  return {
    'peers.list': () => ({ peers: peers.list() }),
    'peers.create': (request) => peers.summary(peers.create(request)),
    'peers.start': ({ id }) => peers.start(id),
    'peers.stop': ({ id }) => peers.stop(id),
    'peers.restart': ({ id }) => peers.restart(id),
    'peers.sessions': ({ id }) => peers.sessions(id),
    'peers.ping': ({ id }) => peers.ping(id),
    'peers.revokeSession': async ({ id, label }) => ({ revoked: await peers.revokeSession(id, label) }),
    'peers.allow': ({ callee, caller, skills }) => peers.allow(callee, caller, skills),
    'peers.call': async ({ from, to, skill, arguments: args }) => ({ result: await peers.call(from, to, skill, args) }),
    'peers.trustIssuer': ({ id, trust }) => peers.trustIssuer(id, trust),
    'peers.revoke': ({ id }) => peers.revoke(id),
  };
}
