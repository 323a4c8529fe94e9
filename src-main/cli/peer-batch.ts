/**
 * `agentplane peer up|down|restart <id>…`: one verb for several of the running plane's peers.
 * Every id is checked against the plane's list first, so a misspelt one refuses the whole
 * command, naming it, before any peer starts or stops. Then all are asked for at once (the
 * plane runs the starts side by side, a bounded number at a time: peer-supervisor.ts), and each
 * is reported the moment it settles: a person sees each peer's line as it becomes healthy, or
 * why it did not, named; a script reading `--json` gets one object per peer and line,
 * `{"ok":true,"id":…,"result":…}` or `{"ok":false,"id":…,"error":{code,message}}`. The command
 * exits non-zero when any peer failed, after all have been reported.
 */
import type { PeerSummary } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { CliError, CommandFailed, jsonFailure } from './cli-error';
import { withPlane, type OutputOptions } from './plane-connection';

type Out = (line: string) => void;

export type PeerVerb = 'start' | 'stop' | 'restart';

const DONE: Record<PeerVerb, string> = { start: 'started', stop: 'stopped', restart: 'restarted' };

/** Refuses an id list naming a peer twice: the second would only be refused by the plane, after the first began. */
function refuseRepeats(ids: readonly string[]): void {
  const repeated = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
  if (repeated.length > 0) throw new CommandFailed(ErrorCode.BadRequest, `${repeated.join(', ')} named more than once`);
}

export async function actOnPeers(verb: PeerVerb, ids: readonly string[], options: OutputOptions, out: Out, describe: (peer: PeerSummary) => string): Promise<void> {
  try {
    refuseRepeats(ids);
    const failed = await withPlane(
      options.dataDir,
      async (plane) => {
        const known = new Set((await plane.call('peers.list', {})).peers.map((peer) => peer.id));
        const unknown = ids.filter((id) => !known.has(id));
        if (unknown.length > 0) {
          throw new CommandFailed(ErrorCode.NotFound, `no peer named ${unknown.join(', ')} (see \`agentplane peer list\`); no peer was ${DONE[verb]}`);
        }
        let failures = 0;
        await Promise.all(
          ids.map(async (id) => {
            try {
              const peer = await plane.call(`peers.${verb}`, { id });
              out(options.json ? JSON.stringify({ ok: true, id, result: peer }) : describe(peer));
            } catch (error) {
              failures += 1;
              const code = error instanceof CommandFailed ? error.code : ErrorCode.Unavailable;
              const message = (error as Error).message;
              if (options.json) out(JSON.stringify({ ok: false, id, error: { code, message } }));
              // The plane's refusals name the peer already; anything else is named here.
              else process.stderr.write(`agentplane: ${message.includes(id) ? message : `peer ${id}: ${message}`}\n`);
            }
          }),
        );
        return failures;
      },
      { needsRunningPlane: true },
    );
    if (failed > 0) process.exitCode = 1;
  } catch (error) {
    // A refusal of the whole command (no plane, an unknown id): one JSON document under --json.
    if (options.json && error instanceof CliError) {
      out(jsonFailure(error instanceof CommandFailed ? error.code : ErrorCode.BadRequest, error.message));
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}
