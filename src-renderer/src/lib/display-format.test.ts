import { describe, expect, it } from 'vitest';
import { clockTime, dateTime } from './display-format';

describe('times read in one fixed UTC form, written out without Intl', () => {
  it('writes a clock time to the millisecond and a date and time to the second', () => {
    expect(clockTime('2026-11-30T13:39:34.512Z')).toBe('13:39:34.512');
    expect(clockTime('2026-11-30T13:39:34Z')).toBe('13:39:34.000');
    expect(clockTime('2026-11-30T14:39:34.007+01:00')).toBe('13:39:34.007');
    expect(dateTime('2026-11-30T13:39:34.512Z')).toBe('30 Nov 2026, 13:39:34 UTC');
    expect(dateTime(Date.parse('2026-09-05T00:00:00Z'))).toBe('05 Sep 2026, 00:00:00 UTC');
    expect(dateTime(0)).toBe('01 Jan 1970, 00:00:00 UTC');
    // Before the epoch the milliseconds still count forward within the second.
    expect(clockTime('1969-12-31T23:59:59.250Z')).toBe('23:59:59.250');
  });

  it('says what Intl.DateTimeFormat in en-GB, UTC, says, for instants across the years', () => {
    const intlDate = new Intl.DateTimeFormat('en-GB', {
      year: 'numeric',
      month: 'short',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hour12: false,
      timeZone: 'UTC',
    });
    const intlTime = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false, timeZone: 'UTC' });
    // Some ICU versions abbreviate September as "Sept"; the fixed form is always "Sep".
    const sameMonths = (text: string) => text.replace('Sept', 'Sep');
    let ms = Date.parse('1999-12-31T23:59:59.999Z');
    for (let i = 0; i < 500; i++) {
      ms += 86_400_000 * 17 + 3_600_000 * 5 + 60_000 * 7 + 1_013 * i;
      const iso = new Date(ms).toISOString();
      expect(dateTime(iso)).toBe(`${sameMonths(intlDate.format(ms))} UTC`);
      expect(clockTime(iso)).toBe(`${intlTime.format(ms)}.${iso.slice(20, 23)}`);
    }
  });

  it('hands back what is not a time as it came', () => {
    expect(clockTime('not a time')).toBe('not a time');
    expect(dateTime('')).toBe('');
    expect(dateTime('2026-13-40T00:00:00Z')).toBe('2026-13-40T00:00:00Z');
    expect(dateTime(Number.NaN)).toBe('NaN');
    // Past the range a Date can hold: refused as a time, not thrown.
    expect(dateTime(8.65e15)).toBe('8650000000000000');
  });
});
