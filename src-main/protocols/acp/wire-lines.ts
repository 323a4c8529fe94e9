/**
 * Newline-delimited framing of one direction of the tap's wire, for observation only: the bytes
 * themselves are forwarded as they arrive (acp-tap.ts pipes them), so nothing here can delay,
 * split or change what the other side reads. A line may arrive in any number of chunks and end
 * in LF or CRLF; its terminator is not part of what is observed.
 *
 * Memory is bounded per direction: a line that grows past `maxLineBytes` stops being buffered
 * and is only hashed and measured (with its first bytes kept for a preview) until its newline,
 * then reported as over-long. A final line without a newline is reported when the stream ends.
 */
import { createHash, type Hash } from 'node:crypto';

export type FramedLine = { kind: 'line'; bytes: Buffer } | { kind: 'overlong'; size: number; digest: string; head: Buffer };

const HEAD_BYTES = 512;

export class LineFramer {
  private parts: Buffer[] = [];
  private buffered = 0;
  private overlong: { hash: Hash; size: number; head: Buffer } | null = null;

  constructor(
    private readonly maxLineBytes: number,
    private readonly emit: (line: FramedLine) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        if (start < chunk.length) this.append(chunk.subarray(start));
        return;
      }
      this.append(chunk.subarray(start, nl));
      this.finishLine();
      start = nl + 1;
    }
  }

  /** The stream ended: a last line without a newline is still a line. */
  end(): void {
    if (this.buffered > 0 || this.overlong) this.finishLine();
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.overlong) {
      this.overlong.hash.update(piece);
      this.overlong.size += piece.length;
      return;
    }
    if (this.buffered + piece.length <= this.maxLineBytes) {
      // Copied: the chunk belongs to the forwarding stream, which may reuse nothing, but a
      // subarray would pin the whole chunk for as long as the line waits in the queue.
      this.parts.push(Buffer.from(piece));
      this.buffered += piece.length;
      return;
    }
    const sofar = Buffer.concat([...this.parts, piece]);
    const hash = createHash('sha256').update(sofar);
    this.overlong = { hash, size: sofar.length, head: Buffer.from(sofar.subarray(0, HEAD_BYTES)) };
    this.parts = [];
    this.buffered = 0;
  }

  private finishLine(): void {
    if (this.overlong) {
      const { hash, size, head } = this.overlong;
      this.overlong = null;
      // The terminator's CR, when there was one, is hashed with the line: an over-long line is
      // reported as the bytes it was, not re-read to strip one byte.
      this.emit({ kind: 'overlong', size, digest: hash.digest('hex'), head });
      return;
    }
    let bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.buffered = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    this.emit({ kind: 'line', bytes });
  }
}
