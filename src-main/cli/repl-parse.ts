/**
 * How the REPL reads one line: words split the way a POSIX shell splits them, then flags
 * picked out against a small per-command spec.
 *
 * Why a tokenizer and not `line.split(/\s+/)`: the protocol's original CLI did exactly that
 * (docs/PEER-PROTOCOL.md, "The interactive client"), and
 * `SentTo "hello there" mcpv2://…` became the prompt `"hello` and the address `there`, with
 * the real address silently dropped. The rules here are shlex's (POSIX mode):
 * - whitespace separates words; quoted and unquoted pieces that touch form one word
 *   (`a"b c"d` is `ab cd`), and `""` is an empty word;
 * - inside single quotes every character is literal;
 * - inside double quotes a backslash escapes only `"`, `\`, `$` and `` ` `` and is kept before
 *   anything else (so `"C:\dir"` stays as typed);
 * - outside quotes a backslash makes the next character literal.
 * A quote that is never closed, or a line that ends in a lone backslash, is an error naming the
 * column, never a guess: a wrong parse would send the wrong thing to a peer.
 *
 * Pure: no I/O, so every rule is unit-tested (repl-parse.test.ts).
 */

export class ReplParseError extends Error {
  override readonly name = 'ReplParseError';
}

const DOUBLE_QUOTE_ESCAPABLE = new Set(['"', '\\', '$', '`']);

/** The words of `line`; throws ReplParseError on unbalanced quotes or a trailing backslash. */
export function tokenize(line: string): string[] {
  const words: string[] = [];
  let word = '';
  // A word exists once anything (even an empty pair of quotes) has started it.
  let inWord = false;
  let quote: { char: '"' | "'"; column: number } | null = null;

  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote?.char === "'") {
      if (char === "'") quote = null;
      else word += char;
      continue;
    }
    if (quote?.char === '"') {
      if (char === '"') quote = null;
      else if (char === '\\' && i + 1 < line.length && DOUBLE_QUOTE_ESCAPABLE.has(line[i + 1]!)) word += line[++i]!;
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = { char, column: i + 1 };
      inWord = true;
    } else if (char === '\\') {
      if (i + 1 >= line.length) throw new ReplParseError(`the line ends with a lone backslash (column ${i + 1}); write \\\\ for a literal backslash`);
      word += line[++i]!;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote) {
    const name = quote.char === '"' ? 'double' : 'single';
    throw new ReplParseError(`unbalanced quotes: the ${name} quote (${quote.char}) at column ${quote.column} is never closed`);
  }
  if (inWord) words.push(word);
  return words;
}

/** What a command accepts: its positional arguments by name, and its `--flags`. */
export interface ArgSpec {
  /** Names of the positionals, in order; `?` at the end marks an optional one (`port?`). */
  positionals: readonly string[];
  /** `--name` → whether it takes a value (`'string'`) or is a switch (`'boolean'`). */
  flags?: Readonly<Record<string, 'string' | 'boolean'>>;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean>;
}

/**
 * Splits a command's words into positionals and flags. `--flag value` and `--flag=value` both
 * work; `--` ends the flags (so a prompt may start with `--`). Only words starting with `--`
 * are flags, so `-5` is a positional. Unknown flags, missing values and a wrong number of
 * positionals are errors that name the command's usage.
 */
export function parseArgs(command: string, words: readonly string[], spec: ArgSpec, usage: string): ParsedArgs {
  const flags: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const known = spec.flags ?? {};
  let flagsEnded = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!flagsEnded && word.startsWith('--') && word !== '--') {
      const eq = word.indexOf('=');
      const name = eq === -1 ? word.slice(2) : word.slice(2, eq);
      const kind = Object.hasOwn(known, name) ? known[name] : undefined;
      if (!kind) {
        const names = Object.keys(known);
        throw new ReplParseError(`${command} has no option --${name}${names.length ? ` (it takes ${names.map((n) => `--${n}`).join(', ')})` : ''}. Usage: ${usage}`);
      }
      if (kind === 'boolean') {
        if (eq !== -1) throw new ReplParseError(`--${name} is a switch and takes no value. Usage: ${usage}`);
        flags[name] = true;
      } else if (eq !== -1) {
        flags[name] = word.slice(eq + 1);
      } else {
        const value = words[i + 1];
        if (value === undefined) throw new ReplParseError(`--${name} needs a value. Usage: ${usage}`);
        flags[name] = value;
        i++;
      }
      continue;
    }
    if (word === '--' && !flagsEnded) {
      flagsEnded = true;
      continue;
    }
    positionals.push(word);
  }
  const required = spec.positionals.filter((p) => !p.endsWith('?')).length;
  if (positionals.length < required) {
    const missing = spec.positionals[positionals.length]!.replace(/\?$/, '');
    throw new ReplParseError(`${command} needs ${missing}. Usage: ${usage}`);
  }
  if (positionals.length > spec.positionals.length) {
    throw new ReplParseError(
      `${command} takes ${spec.positionals.length} argument${spec.positionals.length === 1 ? '' : 's'} but got ${positionals.length}; quote an argument of several words ("like this"). Usage: ${usage}`,
    );
  }
  return { positionals, flags };
}

/** A TCP port from a word, or null: a whole number from 1 to 65535 (no signs, no spaces). */
export function portFromWord(word: string): number | null {
  if (!/^\d{1,5}$/.test(word)) return null;
  const port = Number(word);
  return port >= 1 && port <= 65535 ? port : null;
}
