/**
 * At most `size` tasks at once; the others wait in the order they came. A slot is held from a
 * task's start until it settles, and handed straight to the next waiter.
 */
export class Slots {
  private busy = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`Slots needs a whole number of slots of at least 1, not ${size}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.busy < this.size) this.busy += 1;
    // The slot is handed over by the task that frees it (`busy` unchanged), so none is overtaken.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.busy -= 1;
    }
  }
}
