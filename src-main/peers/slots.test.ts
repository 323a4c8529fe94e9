/** Slots: never more than its size at once, the waiters served in the order they came, a failing task's slot freed. */
import { describe, expect, it } from 'vitest';
import { Slots } from './slots';

describe('Slots', () => {
  it('runs at most its size at once and hands each freed slot to the next in line', async () => {
    const slots = new Slots(3);
    let running = 0;
    let most = 0;
    const began: number[] = [];
    const releases: Array<() => void> = [];
    const results = Array.from({ length: 8 }, (_, i) =>
      slots.run(async () => {
        began.push(i);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
        return i;
      }),
    );
    // Let the first three begin; the rest wait.
    await Promise.resolve();
    expect(began).toEqual([0, 1, 2]);
    // Free them one at a time, each letting exactly one more begin, in order.
    for (let freed = 0; freed < 8; freed++) {
      releases.shift()!();
      await results[freed];
    }
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(began).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('frees the slot of a task that fails, and refuses a size that is not a whole number of at least 1', async () => {
    const slots = new Slots(1);
    await expect(slots.run(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await expect(slots.run(async () => 'next')).resolves.toBe('next');
    expect(() => new Slots(0)).toThrow('at least 1, not 0');
    expect(() => new Slots(1.5)).toThrow('not 1.5');
  });
});
