/**
 * The provider key kept out of every message, in whatever form a provider echoes it.
 *
 * A provider's error text reaches the run's error, the journal (for good: it is append-only and
 * exported in bundles) and `providers test`. Providers echo the presented credential, and not
 * only as written: a server that decoded, logged or mangled it echoes it base64 or hex encoded,
 * reversed, spaced out, or a piece of it inside other text. Removing only the key as written
 * leaves all of those, and each gives the key (or most of it) back to whoever reads the journal.
 *
 * What is removed, each stretch replaced by a marker naming the form ("[key]", "[key, reversed]",
 * "[key, base64]", "[key, hex]"):
 * - the key as written, and any stretch of KEY_RUN (8) or more of its letters and digits in a
 *   row, whatever stands between them (spaces, dashes, dots, line breaks: a spaced-out key) and
 *   in either case. 8 because the rule was "any 8-character slice" before and a scrubber must not
 *   get weaker; a stretch that long of a random key is a real part of it (about 48 bits), while
 *   ordinary text never holds 8 letters and digits of a random key in a row by chance. A key
 *   shorter than 8 is matched whole;
 * - the same for the key reversed;
 * - its base64 (and base64url, which differs only in the two non-alphanumeric symbols): the
 *   encoding of the key at each of the three byte offsets it can sit at inside longer encoded
 *   text, each cut to the characters that depend on the key's bytes alone (the first and last
 *   may mix in a neighbour's bits, and those differ with the neighbour), then any 11 characters
 *   in a row of that (8 bytes' worth). The standalone encoding, padding included, goes whole;
 * - its hex (either case): any 16 hex digits in a row of it (8 bytes' worth).
 *
 * Separators are everything that is not an ASCII letter or digit: the text is compared with them
 * taken out (on both sides), so "s k - l i v e" and "sk-live" read alike, and base64's `+/` and
 * base64url's `-_` drop out the same way. A stretch is removed from its first matched character
 * to its last, separators between included. The cost is one pass per window length (three)
 * over the text with a rolling hash; the windows are built once per key (keyScrubber keeps the
 * last few keys' scrubbers), never per message.
 */

/** A stretch of this many letters and digits of the key (or its reversal) is removed: see above. */
export const KEY_RUN = 8;
/** Base64 characters standing for KEY_RUN bytes (8 × 8 bits / 6, rounded up). */
const BASE64_RUN = 11;
/** Hex digits standing for KEY_RUN bytes. */
const HEX_RUN = 16;
/** An encoded needle shorter than this says too little of the key to be told from chance. */
const MIN_ENCODED = 4;

type Form = 'key' | 'reversed' | 'base64' | 'hex';
const FORMS: readonly Form[] = ['key', 'reversed', 'base64', 'hex'];
const MARKERS: Record<Form, string> = { key: '[key]', reversed: '[key, reversed]', base64: '[key, base64]', hex: '[key, hex]' };

export type KeyScrubber = (text: string) => string;

/** The letters and digits, lower-cased: what a key is compared by. */
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A character's index in ALPHABET (either case), or -1 for a separator. */
function codeOf(char: number): number {
  if (char >= 48 && char <= 57) return char - 48;
  if (char >= 97 && char <= 122) return char - 87;
  if (char >= 65 && char <= 90) return char - 55;
  return -1;
}

/** The letters and digits of `text`, lower-cased. */
function keyChars(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = codeOf(text.charCodeAt(i));
    if (code >= 0) out += ALPHABET[code];
  }
  return out;
}

// Windows are found by a rolling hash (Rabin-Karp, modulo 2^32) over the text's letters and
// digits, checked first against a 64 Ki-bit filter of the key's window hashes: a few integer
// operations per character and window length, and a string is cut only where the filter and the
// hash match (in practice, only where the key is). A 64 KiB error body costs about a millisecond
// or two; a 200-character one, microseconds.
const BASE = 37;
const FILTER_BITS = 1 << 16;

const filterBit = (hash: number) => (hash ^ (hash >>> 16)) & (FILTER_BITS - 1);

function hashOf(window: string): number {
  let hash = 0;
  for (let i = 0; i < window.length; i++) hash = (Math.imul(hash, BASE) + codeOf(window.charCodeAt(i))) | 0;
  return hash;
}

/** Windows of one length: a filter and the hashes (to pass over the rest quickly), and each one's form. */
interface Windows {
  size: number;
  /** BASE^(size - 1) modulo 2^32: what the character leaving the window weighed. */
  leaving: number;
  filter: Uint8Array;
  hashes: Set<number>;
  forms: Map<string, Form>;
}

/**
 * The key's base64 when it starts `offset` bytes into a longer encoded text: only the
 * characters made of the key's bits alone (character i covers bits 6i..6i+5; the key holds
 * bits 8·offset up to 8·(offset + length)).
 */
function base64Inner(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes, Buffer.alloc(2)]).toString('base64');
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

/** Builds the scrubber of one key: its windows, by length, each naming the form it came from. */
export function buildKeyScrubber(key: string): KeyScrubber {
  if (!key) return (text) => text;
  const bytes = Buffer.from(key, 'utf8');
  const reversed = [...key].reverse().join('');
  // Found as written first: these carry the edges the letters-and-digits comparison cannot see
  // (a key ending in `-`, base64 padding).
  const exact: Array<[string, Form]> = (
    [
      [key, 'key'],
      [reversed, 'reversed'],
      [bytes.toString('base64'), 'base64'],
      [bytes.toString('base64url'), 'base64'],
    ] as Array<[string, Form]>
  ).filter(([needle]) => needle.length > 0);
  const needles: Array<[string, Form, number]> = [
    [keyChars(key), 'key', KEY_RUN],
    [keyChars(reversed), 'reversed', KEY_RUN],
    ...[0, 1, 2].map((offset): [string, Form, number] => [keyChars(base64Inner(bytes, offset)), 'base64', BASE64_RUN]),
    [bytes.toString('hex'), 'hex', HEX_RUN],
  ];
  // length → windows; a window two forms share keeps the first (the key's own name).
  const bySize = new Map<number, Windows>();
  for (const [needle, form, run] of needles) {
    if (needle.length === 0 || (form !== 'key' && form !== 'reversed' && needle.length < MIN_ENCODED)) continue;
    const size = Math.min(run, needle.length);
    let windows = bySize.get(size);
    if (!windows) {
      let leaving = 1;
      for (let i = 1; i < size; i++) leaving = Math.imul(leaving, BASE);
      bySize.set(size, (windows = { size, leaving, filter: new Uint8Array(FILTER_BITS / 8), hashes: new Set(), forms: new Map() }));
    }
    for (let i = 0; i + size <= needle.length; i++) {
      const window = needle.slice(i, i + size);
      if (windows.forms.has(window)) continue;
      windows.forms.set(window, form);
      const hash = hashOf(window);
      windows.hashes.add(hash);
      const bit = filterBit(hash);
      windows.filter[bit >>> 3]! |= 1 << (bit & 7);
    }
  }
  const sizes = [...bySize.values()];

  return (text) => {
    if (!text) return text;
    // Per character of `text`: 0, or 1 + the index in FORMS of what covers it.
    const marks = new Uint8Array(text.length);
    const mark = (from: number, to: number, form: Form) => {
      const value = FORMS.indexOf(form) + 1;
      for (let i = from; i <= to; i++) if (marks[i] === 0) marks[i] = value;
    };
    for (const [needle, form] of exact) {
      for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) mark(at, at + needle.length - 1, form);
    }
    // The text's letters and digits (as ALPHABET indices), and where each stands in the text.
    const codes = new Uint8Array(text.length);
    const positions = new Int32Array(text.length);
    let count = 0;
    for (let i = 0; i < text.length; i++) {
      const code = codeOf(text.charCodeAt(i));
      if (code < 0) continue;
      codes[count] = code;
      positions[count++] = i;
    }
    for (const { size, leaving, filter, hashes, forms } of sizes) {
      let hash = 0;
      for (let j = 0; j < count; j++) {
        if (j >= size) hash = (hash - Math.imul(codes[j - size]!, leaving)) | 0;
        hash = (Math.imul(hash, BASE) + codes[j]!) | 0;
        if (j + 1 < size) continue;
        const bit = filterBit(hash);
        if ((filter[bit >>> 3]! & (1 << (bit & 7))) === 0 || !hashes.has(hash)) continue;
        let window = '';
        for (let k = j + 1 - size; k <= j; k++) window += ALPHABET[codes[k]!];
        const form = forms.get(window);
        if (form) mark(positions[j + 1 - size]!, positions[j]!, form);
      }
    }
    // The text again, each marked stretch one marker (unmarked stretches copied whole).
    let out = '';
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const value = marks[i]!;
      if (value === 0) continue;
      if (from < i) out += text.slice(from, i);
      if (i === 0 || marks[i - 1] !== value) out += MARKERS[FORMS[value - 1]!];
      from = i + 1;
    }
    return from < text.length ? out + text.slice(from) : out;
  };
}

/** The last few keys' scrubbers: a driver asks for one per request, and building one per message would be waste. */
const scrubbers = new Map<string, KeyScrubber>();
const KEPT_SCRUBBERS = 8;

/** The scrubber of `key`, built once and kept (the least recently used goes past KEPT_SCRUBBERS). */
export function keyScrubber(key: string): KeyScrubber {
  let scrubber = scrubbers.get(key);
  if (scrubber) {
    scrubbers.delete(key);
  } else {
    scrubber = buildKeyScrubber(key);
    if (scrubbers.size >= KEPT_SCRUBBERS) scrubbers.delete(scrubbers.keys().next().value!);
  }
  scrubbers.set(key, scrubber);
  return scrubber;
}
