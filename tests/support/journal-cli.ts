/**
 * `agentplane journal …` through the CLI's own commands, in process: what it printed, the exit
 * code it set, and the error it ended with (a CliError's one line), if any.
 */
import { Command } from 'commander';
import { addJournalCommands } from '../../src-main/cli/journal-commands';

export interface JournalCliResult {
  code: number;
  lines: string[];
  /** The message the command failed with (exit 1), or null when it did not throw. */
  error: string | null;
}

export async function journalCli(...args: string[]): Promise<JournalCliResult> {
  const lines: string[] = [];
  const program = new Command('agentplane').exitOverride();
  addJournalCommands(program, (line) => lines.push(line));
  const saved = process.exitCode;
  process.exitCode = 0;
  try {
    await program.parseAsync(['journal', ...args], { from: 'user' });
    return { code: Number(process.exitCode ?? 0), lines, error: null };
  } catch (error) {
    return { code: 1, lines, error: (error as Error).message };
  } finally {
    process.exitCode = saved;
  }
}
