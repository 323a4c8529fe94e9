/**
 * Lowercase hex for hashes at rest (persisted Merkle state, fixtures, exports).
 *
 * Strict on input: Buffer.from(text, 'hex') stops silently at the first bad character and
 * drops an odd last digit, which would turn a corrupted state file into a shorter hash
 * instead of an error. fromHex accepts only an even number of [0-9a-fA-F] and throws
 * otherwise; toHex always writes lowercase, so a hash has one text form.
 */

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function fromHex(text: string): Uint8Array {
  if (!HEX.test(text)) {
    throw new TypeError(`not an even-length hex string: ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`);
  }
  return new Uint8Array(Buffer.from(text, 'hex'));
}
