/**
 * The REPL's shell-like word splitting and flag parsing. The original CLI split on whitespace and
 * tore `SentTo "hello there" mcpv2://…` apart; these pin the shlex (POSIX) rules that replaced
 * it, the errors that replace a wrong parse, and a property: quoting any list of words and
 * tokenizing the result gives the words back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseArgs, portFromWord, ReplParseError, tokenize } from './repl-parse';

describe('tokenize', () => {
  it('splits on runs of whitespace and ignores it at both ends', () => {
    expect(tokenize('  PingTo \t mcpv2://127.0.0.1:8000/mcpv2  ')).toEqual(['PingTo', 'mcpv2://127.0.0.1:8000/mcpv2']);
    expect(tokenize('')).toEqual([]);
    expect(tokenize('   ')).toEqual([]);
  });

  it('keeps a double-quoted prompt of several words as one word (docs/PEER-PROTOCOL.md, "The interactive client")', () => {
    expect(tokenize('SentTo "hello there" mcpv2://h:1/mcpv2')).toEqual(['SentTo', 'hello there', 'mcpv2://h:1/mcpv2']);
  });

  it('keeps single-quoted text literal, backslashes and double quotes included', () => {
    expect(tokenize(`SentTo 'say "hi" \\n $x' a`)).toEqual(['SentTo', 'say "hi" \\n $x', 'a']);
  });

  it('inside double quotes, a backslash escapes only " \\ $ and ` and is kept before anything else', () => {
    expect(tokenize('"a \\"quoted\\" word"')).toEqual(['a "quoted" word']);
    expect(tokenize('"back\\\\slash"')).toEqual(['back\\slash']);
    expect(tokenize('"C:\\dir\\file"')).toEqual(['C:\\dir\\file']);
    expect(tokenize('"cost \\$5"')).toEqual(['cost $5']);
  });

  it('outside quotes, a backslash makes the next character literal', () => {
    expect(tokenize('hello\\ there next')).toEqual(['hello there', 'next']);
    expect(tokenize('it\\\'s')).toEqual(["it's"]);
    expect(tokenize('\\"x')).toEqual(['"x']);
  });

  it('joins touching quoted and unquoted pieces into one word', () => {
    expect(tokenize(`a"b c"d'e f'`)).toEqual(['ab cde f']);
    expect(tokenize(`--payee="Ada Lovelace"`)).toEqual(['--payee=Ada Lovelace']);
  });

  it('keeps empty quotes as an empty word', () => {
    expect(tokenize('SentTo "" x')).toEqual(['SentTo', '', 'x']);
    expect(tokenize("''")).toEqual(['']);
  });

  it('keeps non-ASCII text as is', () => {
    expect(tokenize('SentTo "héllo wörld ✓" x')).toEqual(['SentTo', 'héllo wörld ✓', 'x']);
  });

  it('refuses an unclosed quote, naming which quote and where, instead of guessing', () => {
    expect(() => tokenize('SentTo "hello there mcpv2://h:1/mcpv2')).toThrow(ReplParseError);
    expect(() => tokenize('SentTo "hello there mcpv2://h:1/mcpv2')).toThrow('unbalanced quotes: the double quote (") at column 8 is never closed');
    expect(() => tokenize("SentTo 'it")).toThrow('the single quote');
    expect(() => tokenize('"a" "b')).toThrow('column 5');
    // An escaped quote opens nothing.
    expect(tokenize('\\"')).toEqual(['"']);
    expect(() => tokenize('"\\"')).toThrow(ReplParseError);
  });

  it('refuses a line that ends in a lone backslash', () => {
    expect(() => tokenize('SentTo hi\\')).toThrow('lone backslash');
  });

  it('round-trips any words through single quoting (property)', () => {
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 6 }), fc.constantFrom(' ', '  ', '\t'), (words, gap) => {
        expect(tokenize(words.map(quote).join(gap))).toEqual(words);
      }),
    );
  });

  it('never throws anything but ReplParseError (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '"', "'", '\\', '$', 'é') }), (line) => {
        try {
          tokenize(line);
        } catch (error) {
          expect(error).toBeInstanceOf(ReplParseError);
        }
      }),
    );
  });
});

describe('parseArgs', () => {
  const usage = 'PayTo <amount> <address> [--currency USD] [--payee NAME] [--dry]';
  const spec = { positionals: ['an amount', 'an address'], flags: { currency: 'string', payee: 'string', dry: 'boolean' } } as const;

  it('separates positionals from flags, in any order, with either flag form', () => {
    expect(parseArgs('PayTo', ['--currency', 'EUR', '10', 'addr', '--payee=Ada Lovelace', '--dry'], spec, usage)).toEqual({
      positionals: ['10', 'addr'],
      flags: { currency: 'EUR', payee: 'Ada Lovelace', dry: true },
    });
  });

  it('treats a word starting with a single dash as a positional', () => {
    expect(parseArgs('PayTo', ['-5', 'addr'], spec, usage).positionals).toEqual(['-5', 'addr']);
  });

  it('ends flags at --, so a positional may start with --', () => {
    expect(parseArgs('PayTo', ['--', '--weird', 'addr'], spec, usage).positionals).toEqual(['--weird', 'addr']);
  });

  it('names an unknown flag and the ones the command takes', () => {
    expect(() => parseArgs('PayTo', ['10', 'a', '--amount', '3'], spec, usage)).toThrow('PayTo has no option --amount (it takes --currency, --payee, --dry)');
    expect(() => parseArgs('help', ['--x'], { positionals: [] }, 'help')).toThrow('help has no option --x. Usage: help');
  });

  it('refuses a flag without its value, and a value given to a switch', () => {
    expect(() => parseArgs('PayTo', ['10', 'a', '--payee'], spec, usage)).toThrow('--payee needs a value');
    expect(() => parseArgs('PayTo', ['10', 'a', '--dry=yes'], spec, usage)).toThrow('--dry is a switch');
  });

  it('names the missing positional, and says to quote when there are too many', () => {
    expect(() => parseArgs('PayTo', ['10'], spec, usage)).toThrow('PayTo needs an address. Usage: PayTo');
    expect(() => parseArgs('PayTo', [], spec, usage)).toThrow('PayTo needs an amount');
    expect(() => parseArgs('SentTo', ['hello', 'there', 'addr'], { positionals: ['a prompt', 'an address'] }, 'SentTo …')).toThrow(
      'SentTo takes 2 arguments but got 3; quote an argument of several words',
    );
  });

  it('allows optional positionals to be left out', () => {
    expect(parseArgs('X', [], { positionals: ['port?'] }, 'X [port]').positionals).toEqual([]);
    expect(parseArgs('X', ['1'], { positionals: ['port?'] }, 'X [port]').positionals).toEqual(['1']);
  });

  it('is not fooled by flag names inherited from Object.prototype', () => {
    expect(() => parseArgs('PayTo', ['10', 'a', '--constructor', 'x'], spec, usage)).toThrow('has no option --constructor');
  });
});

describe('portFromWord', () => {
  it('accepts 1..65535 written as plain digits, nothing else', () => {
    expect(portFromWord('8000')).toBe(8000);
    expect(portFromWord('1')).toBe(1);
    expect(portFromWord('65535')).toBe(65535);
    for (const word of ['0', '65536', '-1', '+80', '80.0', ' 80', '0x50', '', '123456', '8e3']) expect(portFromWord(word)).toBeNull();
  });
});
