/**
 * The CLI loads only the module of the subcommand asked for (a CLI call is a process, and
 * loading every command's module, and the plane, was most of its start-up). That is only right
 * while COMMAND_MODULE_OF names, for every top-level subcommand, the module that registers it:
 * a subcommand missing from the map still works (the whole program is loaded for it), but one
 * mapped to the wrong module would be "unknown command". This holds the map to the modules.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_MODULE_OF, COMMAND_MODULES } from './program';

describe('the CLI loads the module of the subcommand asked for', () => {
  it('maps every top-level subcommand each module registers to that module, and nothing else', async () => {
    const registered: Record<string, string> = {};
    for (const [name, load] of Object.entries(COMMAND_MODULES)) {
      const program = new Command('agentplane');
      (await load())(program);
      for (const command of program.commands) registered[command.name()] = name;
    }
    expect(registered).toEqual(COMMAND_MODULE_OF);
  });

  it('builds, for one subcommand, a program holding it; with none, the whole program', async () => {
    const whole = (await buildProgram()).commands.map((c) => c.name());
    expect(whole).toEqual(expect.arrayContaining(['serve', 'start', ...Object.keys(COMMAND_MODULE_OF)]));
    for (const subcommand of Object.keys(COMMAND_MODULE_OF)) {
      const names = (await buildProgram({ subcommand })).commands.map((c) => c.name());
      expect(names).toContain(subcommand);
      expect(names.length).toBeLessThan(whole.length);
    }
    // --version alone: the program without any command module.
    expect((await buildProgram({ versionOnly: true })).commands.map((c) => c.name())).toEqual(['serve', 'start']);
    // A name no module registers (a typo): the whole program, so commander can suggest the right one.
    expect((await buildProgram({ subcommand: 'peers' })).commands.map((c) => c.name())).toEqual(whole);
  });
});
