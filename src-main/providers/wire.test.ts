/**
 * The shared wire helpers: the whole-request deadline, the base URL check, key scrubbing, and
 * the retry window a 429/529 carries into the runtime's backoff. The SSE reader every streaming
 * driver parses through is tested beside it, in net/sse.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Deadline, normalisedBaseUrl, retryAfterOf, scrubSecret } from './wire';

describe('Deadline', () => {
  it('says how much of the whole-request deadline is left, never below zero', async () => {
    const deadline = new Deadline(60, undefined);
    try {
      expect(deadline.remainingMs()).toBeGreaterThan(40);
      expect(deadline.remainingMs()).toBeLessThanOrEqual(60);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(deadline.remainingMs()).toBe(0);
      expect(deadline.signal.aborted).toBe(true);
    } finally {
      deadline.dispose();
    }
  });
});

describe('retryAfterOf', () => {
  it('reads delta-seconds, retry-after-ms (which wins), HTTP dates, and nothing else', () => {
    expect(retryAfterOf({ 'retry-after': '3' })).toBe(3000);
    expect(retryAfterOf({ 'retry-after': ' 0.5 ' })).toBe(500);
    expect(retryAfterOf({ 'retry-after': ['2', '9'] })).toBe(2000);
    expect(retryAfterOf({ 'retry-after': '3', 'retry-after-ms': '1250' })).toBe(1250);
    expect(retryAfterOf({ 'retry-after': '3', 'retry-after-ms': 'soon' })).toBe(3000);
    const inAMinute = retryAfterOf({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() });
    expect(inAMinute).toBeGreaterThan(50_000);
    expect(inAMinute).toBeLessThanOrEqual(60_000);
    expect(retryAfterOf({ 'retry-after': new Date(Date.now() - 60_000).toUTCString() })).toBe(0);
    expect(retryAfterOf({ 'retry-after': 'soon' })).toBeNull();
    expect(retryAfterOf({})).toBeNull();
  });
});

describe('small guards', () => {
  it('normalisedBaseUrl refuses a URL that could carry a secret into the profile, naming the driver', () => {
    expect(normalisedBaseUrl('https://api.example.com/v1/')).toBe('https://api.example.com/v1');
    expect(() => normalisedBaseUrl('https://user:pw@api.example.com', 'anthropic')).toThrow(/^anthropic: baseUrl must not carry credentials/);
    expect(() => normalisedBaseUrl('https://api.example.com/?key=1', 'anthropic')).toThrow(/query or fragment/);
    expect(() => normalisedBaseUrl('file:///etc/passwd')).toThrow(/http or https/);
  });

  it('scrubSecret removes the key and any 8-character slice of it', () => {
    const key = 'sk-ant-0123456789abcdef';
    expect(scrubSecret(`bad key ${key}!`, key)).toBe('bad key [key]!');
    expect(scrubSecret('prefix 456789abcd suffix', key)).not.toContain('456789ab');
  });
});
