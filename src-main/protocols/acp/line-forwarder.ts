/**
 * Line-at-a-time forwarding, for `--policy inbox` only: there the tap must be able to withhold
 * one whole line (an editor's answer to a permission request a person already answered at the
 * plane) and to insert lines of its own (that answer, to the agent; `$/cancel_request`, to the
 * editor) without ever splitting someone else's line. Under `observe` the tap pipes bytes and
 * uses none of this.
 *
 * A line is held only until its newline, and only up to `maxHold` bytes: a longer line cannot
 * be one the tap withholds (answers are small), so what was held is written and the rest of
 * that line streams through as it comes. Inserted lines wait while such a line is mid-way.
 * Every byte that is not withheld is written exactly as it arrived.
 */
import type { Writable } from 'node:stream';

export class LineForwarder {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Part of the current line has been written: nothing may be inserted until its newline. */
  private midLine = false;
  private readonly inserts: Buffer[] = [];

  constructor(
    private readonly dest: Writable,
    private readonly maxHold: number,
    /** Whether a whole line (terminator included) is forwarded; false withholds it. */
    private readonly judge: (line: Buffer) => boolean,
  ) {}

  /** Forwards what of `chunk` can be; false when the destination asks the source to wait. */
  push(chunk: Buffer): boolean {
    let ok = true;
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl + 1;
      const piece = chunk.subarray(start, end);
      start = end;
      if (this.midLine) {
        ok = this.dest.write(piece) && ok;
        if (nl !== -1) {
          this.midLine = false;
          ok = this.flushInserts() && ok;
        }
        continue;
      }
      this.held.push(Buffer.from(piece));
      this.heldBytes += piece.length;
      if (nl !== -1) ok = this.finishLine() && ok;
      else if (this.heldBytes > this.maxHold) {
        ok = this.dest.write(Buffer.concat(this.held)) && ok;
        this.held = [];
        this.heldBytes = 0;
        this.midLine = true;
      }
    }
    return ok;
  }

  /** The source ended: a last line without a newline is judged like any other. */
  end(): void {
    if (this.heldBytes > 0) this.finishLine();
    this.midLine = false;
    this.flushInserts();
  }

  /** A whole line of the tap's own (terminator included), written at the next line boundary. */
  insert(line: Buffer): void {
    this.inserts.push(line);
    if (!this.midLine) this.flushInserts();
  }

  private finishLine(): boolean {
    const line = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held);
    this.held = [];
    this.heldBytes = 0;
    const ok = this.judge(line) ? this.dest.write(line) : true;
    return this.flushInserts() && ok;
  }

  private flushInserts(): boolean {
    let ok = true;
    while (this.inserts.length > 0) ok = this.dest.write(this.inserts.shift()!) && ok;
    return ok;
  }
}
