/**
 * The key scrubber on its own (the way a user meets it, through a provider's error, is in
 * plane/provider-key-forms.test.ts): every form of the key goes, at every alignment and with
 * every separator, and ordinary provider text (ids, hashes, other base64) stays as it was.
 */
import { describe, expect, it } from 'vitest';
import { scrubSecret } from './wire';

const KEY = 'sk-proj-Zq7vR2mXo9LbT4w?KcY8nH1sD5gF~jU6eP3tA';
const reversed = (text: string) => [...text].reverse().join('');

/** Any `window` characters of the key (or reversed) left in `text`, as written, without whitespace, or decoded from base64/hex at any alignment. */
function leftOf(text: string, window = 6): string | null {
  const flat = text.replace(/\s+/g, '');
  const views = [text, flat];
  for (const run of flat.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) for (let o = 0; o < 4; o++) views.push(Buffer.from(run.slice(o), 'base64').toString('latin1'));
  for (const run of flat.match(/[0-9a-fA-F]{8,}/g) ?? []) for (let o = 0; o < 2; o++) views.push(Buffer.from(run.slice(o, o + ((run.length - o) & ~1)), 'hex').toString('latin1'));
  for (const needle of [KEY, reversed(KEY)]) {
    for (let i = 0; i + window <= needle.length; i++) {
      const stretch = needle.slice(i, i + window);
      if (views.some((v) => v.includes(stretch))) return stretch;
    }
  }
  return null;
}

describe('scrubSecret: the key in every form', () => {
  it('as written, and a run of 8 or more of it anywhere; a run of 7 is below the threshold', () => {
    expect(scrubSecret(`bad key ${KEY}!`, KEY)).toBe('bad key [key]!');
    expect(scrubSecret(`<${KEY.slice(9, 30)}>`, KEY)).toBe('<[key]>');
    expect(scrubSecret(`<${KEY.slice(9, 17)}>`, KEY)).toBe('<[key]>');
    expect(scrubSecret(`<${KEY.slice(9, 16)}>`, KEY)).toBe(`<${KEY.slice(9, 16)}>`);
    // Two runs, and a run that the old slicing left a tail of.
    expect(scrubSecret(`a ${KEY.slice(0, 20)} b ${KEY.slice(25)} c`, KEY)).toBe('a [key] b [key] c');
  });

  it('spaced out, with any separators, in either case', () => {
    for (const separator of [' ', '  ', '-', '.', ':', '\n', ' | ', '\u00a0']) {
      const spaced = [...KEY].join(separator);
      expect(scrubSecret(`got ${spaced} here`, KEY), JSON.stringify(separator)).toBe('got [key] here');
    }
    expect(scrubSecret(`got ${KEY.toUpperCase()} here`, KEY)).toBe('got [key] here');
    expect(scrubSecret(`got ${KEY.slice(10, 30).split('').join(' ')} here`, KEY)).toBe('got [key] here');
  });

  it('reversed, whole or a run of it', () => {
    expect(scrubSecret(`got ${reversed(KEY)} here`, KEY)).toBe('got [key, reversed] here');
    expect(scrubSecret(`got ${reversed(KEY).slice(5, 20)} here`, KEY)).toBe('got [key, reversed] here');
  });

  it('base64 and base64url, standalone (padding included) and inside longer encoded text at every byte offset', () => {
    for (const alphabet of ['base64', 'base64url'] as const) {
      expect(scrubSecret(`k=${Buffer.from(KEY).toString(alphabet)};`, KEY)).toBe('k=[key, base64];');
      const odd = KEY.slice(0, -1); // not a multiple of 3: the standalone encoding is padded
      expect(scrubSecret(`k=${Buffer.from(odd).toString(alphabet)};`, odd)).toBe('k=[key, base64];');
      for (let before = 0; before < 6; before++) {
        for (let after = 0; after < 3; after++) {
          const encoded = Buffer.from(`${'{"a":"'.slice(0, before)}${KEY}${'"}x'.slice(0, after)}`).toString(alphabet);
          const out = scrubSecret(`auth ${encoded} refused`, KEY);
          expect(out, `${alphabet} ${before}+key+${after}`).toContain('[key, base64]');
          expect(leftOf(out), `${alphabet} ${before}+key+${after}: ${out}`).toBeNull();
        }
      }
    }
  });

  it('base64 wrapped into lines (MIME, 76 a line) inside a longer document', () => {
    const document = Buffer.from(`{"headers":{"authorization":"Bearer ${KEY}","user-agent":"agentplane"}}`).toString('base64');
    const wrapped = document.match(/.{1,76}/g)!.join('\r\n');
    const out = scrubSecret(wrapped, KEY);
    expect(leftOf(out)).toBeNull();
  });

  it('hex, either case, with or without separators', () => {
    const hex = Buffer.from(KEY).toString('hex');
    expect(scrubSecret(`0x${hex}`, KEY)).toBe('0x[key, hex]');
    expect(scrubSecret(hex.toUpperCase(), KEY)).toBe('[key, hex]');
    const dump = Buffer.from(`xx${KEY}yyy`).toString('hex').toUpperCase().match(/../g)!.join(':');
    expect(scrubSecret(dump, KEY)).toBe('78:78:[key, hex]:79:79:79');
  });

  it('leaves ordinary provider text alone: words, ids, hashes, other base64', () => {
    const texts = [
      'The model `gpt-4o-mini` does not exist or you do not have access to it.',
      'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
      'request id req_8f3a9c0b1d2e4f5a6b7c8d9e0f1a2b3c, trace 4bf92f3577b34da6a3ce929d0e0e4736',
      `sha256 ${'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'} ok`,
      `payload ${Buffer.from('{"error":{"type":"overloaded_error","message":"Overloaded"}}').toString('base64')}`,
      'messages.0.content: Input should be a valid list; 429 Too Many Requests; retry after 20 s',
    ];
    for (const text of texts) expect(scrubSecret(text, KEY)).toBe(text);
  });

  it('a key shorter than the run is matched whole; an empty key changes nothing', () => {
    expect(scrubSecret('the key abc123 and ABC-123 and abc12', 'abc123')).toBe('the key [key] and [key] and abc12');
    expect(scrubSecret('anything', '')).toBe('anything');
  });
});
