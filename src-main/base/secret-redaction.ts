/**
 * Recognising credentials in text the plane keeps: command lines (an ACP agent's, an MCP
 * server's), environment assignments, `_meta` members, message text. The journal is
 * append-only and exported whole, so a secret that enters it can never be taken back: whatever
 * looks like one is replaced, before it is journaled, by a marker that names what was removed
 * (`[redacted: value of --bearer]`, `[redacted: OpenAI-style key]`), so a reader still sees
 * that something was there and why it is gone.
 *
 * Three signals, any one enough:
 * - a name that says secret: a flag, variable, header or member whose name holds key, token,
 *   secret, password (passwd, pwd), bearer, auth, credential or cookie. Its value goes, whatever
 *   it looks like. (`--author` is caught too: a lost author name is cheaper than a kept key.)
 * - a value shaped like a known credential format: provider key prefixes (sk-, sk-ant-,
 *   sk-proj-, AIza, hf_, r8_, gsk_, xai-), forge and chat tokens (ghp_ and the other GitHub
 *   prefixes, github_pat_, glpat-, xox?-, npm_), AWS access key ids, JWTs. These are also
 *   found inside longer text (a prompt, a file an agent read), where they are replaced in place.
 * - a whole value that is a long high-entropy token: 32 characters or more from the base64 /
 *   hex alphabets, mixing letters and digits, with Shannon entropy of at least 3.5 bits a
 *   character, and not a UUID or a path. Only whole values (an argument, a variable's value):
 *   inside prose the same test would eat hashes and identifiers people need to read.
 *
 * Pure string work, no I/O: callable on any thread, and cheap enough for every observed message.
 */

/** Names that say their value is a secret. */
export const SECRET_NAME = /key|token|secret|passw(?:or)?d|pwd|bearer|auth|credential|cookie/i;

/** Known credential formats, each with the name its marker gives it. Anchored forms match whole values. */
const KEY_FORMATS: ReadonlyArray<{ label: string; source: string }> = [
  { label: 'Anthropic key', source: 'sk-ant-[A-Za-z0-9_-]{16,}' },
  { label: 'OpenAI-style key', source: 'sk-[A-Za-z0-9_-]{16,}' },
  { label: 'Google API key', source: 'AIza[0-9A-Za-z_-]{30,}' },
  { label: 'Hugging Face token', source: 'hf_[A-Za-z0-9]{30,}' },
  { label: 'Replicate token', source: 'r8_[A-Za-z0-9]{30,}' },
  { label: 'Groq key', source: 'gsk_[A-Za-z0-9]{30,}' },
  { label: 'xAI key', source: 'xai-[A-Za-z0-9]{30,}' },
  { label: 'GitHub token', source: 'gh[pousr]_[A-Za-z0-9]{30,}' },
  { label: 'GitHub token', source: 'github_pat_[A-Za-z0-9_]{30,}' },
  { label: 'GitLab token', source: 'glpat-[A-Za-z0-9_-]{20,}' },
  { label: 'Slack token', source: 'xox[abposr]-[A-Za-z0-9-]{10,}' },
  { label: 'npm token', source: 'npm_[A-Za-z0-9]{36,}' },
  { label: 'AWS access key id', source: '(?:AKIA|ASIA)[0-9A-Z]{16}' },
  { label: 'JWT', source: 'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}' },
];

const WHOLE_FORMATS = KEY_FORMATS.map((f) => ({ label: f.label, pattern: new RegExp(`^${f.source}$`) }));
/** Every format at once, for text that may hold one anywhere; word boundaries keep `task-…` from reading as `sk-…`. */
const EMBEDDED = new RegExp(`(?<![A-Za-z0-9_-])(?:${KEY_FORMATS.map((f) => `(${f.source})`).join('|')})(?![A-Za-z0-9_-])`, 'g');
/** A quick no for the common case: text that holds none of the formats' fixed starts. */
const ANY_PREFIX = /sk-|AIza|hf_|r8_|gsk_|xai-|gh[pousr]_|github_pat_|glpat-|xox|npm_|AKIA|ASIA|eyJ/;

const TOKEN_ALPHABET = /^[A-Za-z0-9+/=_.-]{32,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function marker(what: string): string {
  return `[redacted: ${what}]`;
}

/** Shannon entropy of `text` in bits per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** What kind of credential a whole value looks like, or null. */
export function credentialShape(value: string): string | null {
  if (value.length < 16) return null;
  for (const format of WHOLE_FORMATS) if (format.pattern.test(value)) return format.label;
  if (!TOKEN_ALPHABET.test(value) || UUID.test(value)) return null;
  if (value.startsWith('/') || value.startsWith('./') || value.startsWith('../') || value.includes('//')) return null;
  if (!/[A-Za-z]/.test(value) || !/[0-9]/.test(value)) return null;
  return entropy(value) >= 3.5 ? 'high-entropy token' : null;
}

/** `text` with every known credential format inside it replaced by its marker. */
export function redactEmbeddedCredentials(text: string): string {
  if (text.length < 16 || !ANY_PREFIX.test(text)) return text;
  return text.replace(EMBEDDED, (...groups: unknown[]) => {
    const index = groups.slice(1, KEY_FORMATS.length + 1).findIndex((g) => g !== undefined);
    return marker(KEY_FORMATS[index]?.label ?? 'credential');
  });
}

/** A whole value: its marker if it is shaped like a credential, otherwise its embedded credentials replaced. */
export function redactValue(value: string): string {
  const shape = credentialShape(value);
  return shape ? marker(shape) : redactEmbeddedCredentials(value);
}

const ENV_ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const FLAG = /^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)(?:=(.*))?$/s;
/** `Authorization: Bearer x`, `X-Api-Key: x` as a single argument (curl's -H, many agents' --header). */
const HEADER = /^([A-Za-z0-9-]+):\s*(.+)$/s;

/** A URL's password and its secret-named query parameters replaced; anything else, null. */
function redactUrl(arg: string): string | null {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return null;
  let url: URL;
  try {
    url = new URL(arg);
  } catch {
    return null;
  }
  let changed = false;
  if (url.password) {
    url.password = 'redacted';
    changed = true;
  }
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_NAME.test(name)) {
      url.searchParams.set(name, 'redacted');
      changed = true;
    }
  }
  return changed ? url.toString() : null;
}

/**
 * A command line as it may be kept: the value of every flag whose name says secret (`--x v`,
 * `--x=v`, `-x v`), of every `NAME=value` whose name says secret, the secret half of a header
 * argument, a URL's password and secret-named query parameters, and any argument or value
 * shaped like a credential, each replaced by a marker naming what was removed.
 */
export function redactedArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  let valueOf: string | null = null;
  for (const arg of argv) {
    if (valueOf !== null && !arg.startsWith('-')) {
      out.push(marker(`value of ${valueOf}`));
      valueOf = null;
      continue;
    }
    valueOf = null;
    const flag = FLAG.exec(arg);
    if (flag) {
      const [, name, value] = flag as unknown as [string, string, string | undefined];
      if (SECRET_NAME.test(name)) {
        if (value === undefined) {
          out.push(arg);
          valueOf = name;
        } else out.push(`${name}=${marker(`value of ${name}`)}`);
      } else out.push(value === undefined ? arg : `${name}=${redactValue(value)}`);
      continue;
    }
    const assignment = ENV_ASSIGNMENT.exec(arg);
    if (assignment) {
      const [, name, value] = assignment as unknown as [string, string, string];
      out.push(SECRET_NAME.test(name) ? `${name}=${marker(`value of ${name}`)}` : `${name}=${redactValue(value)}`);
      continue;
    }
    const url = redactUrl(arg);
    if (url !== null) {
      out.push(url);
      continue;
    }
    const header = HEADER.exec(arg);
    if (header && SECRET_NAME.test(header[1]!)) {
      out.push(`${header[1]}: ${marker(`value of header ${header[1]}`)}`);
      continue;
    }
    out.push(redactValue(arg));
  }
  return out;
}
