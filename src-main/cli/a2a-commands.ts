/**
 * `agentplane a2a pins list|accept <origin>`: the keys remote A2A agents' cards are pinned to
 * (a2a.pins.* through the plane, like every other command). A card whose key changed is refused
 * at the call until a person accepts the new key here, having checked it with the agent's owner.
 */
import type { Command } from 'commander';
import { runAndPrint, type OutputOptions } from './plane-connection';

const out = (line: string) => process.stdout.write(`${line}\n`);

export function addA2aCommands(program: Command): void {
  const a2a = program.command('a2a').description('remote A2A agents this plane calls');
  const pins = a2a.command('pins').description("the keys remote agents' cards are pinned to, per origin");
  pins
    .command('list')
    .description('each origin, its pinned key id, and a changed key waiting for a person')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('a2a.pins.list', {}), ({ pins: list }) => {
        if (list.length === 0) return out('No A2A card keys are pinned yet.');
        for (const pin of list) {
          out(`${pin.origin}  key ${pin.keyId}  pinned ${pin.pinnedAt}${pin.pending ? `  CHANGED: key ${pin.pending.keyId} seen ${pin.pending.seenAt}, refused until accepted` : ''}`);
        }
      }),
    );
  pins
    .command('accept')
    .argument('<origin>', 'the origin whose changed key to accept, e.g. https://agents.example.com')
    .description('make the changed key an origin was refused for its pin')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((origin: string, options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('a2a.pins.accept', { origin }), (pin) => out(`${pin.origin} is now pinned to key ${pin.keyId}.`)),
    );
}
