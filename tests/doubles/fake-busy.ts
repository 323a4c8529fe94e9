/**
 * A provider under load, for the wire-faithful fakes (never imported by production code): a test
 * queues refusals on a fake's `busy` list and the fake serves them one per request, in order,
 * before the request's own behaviour answers. "429 twice, then the answer" is
 * `fake.busy.push(rateLimit, rateLimit)` and a request naming `ok`. Each fake writes a refusal in
 * its own wire's error shape; this module holds only what every wire shares.
 */
export interface FakeRefusal {
  /** 429 (rate limit), 529 (Anthropic's overloaded) or another status, sent as given. */
  status: number;
  /** Response headers, e.g. `{'retry-after': '1'}`, an HTTP-date, or `{'retry-after-ms': '30'}`. */
  headers?: Record<string, string>;
  /** Gemini only: a google.rpc.RetryInfo `retryDelay` (e.g. `'0.05s'`) in the error body. */
  retryDelay?: string;
  /** Anthropic only: a 200 stream carrying message_start then an `overloaded_error` event (the status is ignored). */
  asEvent?: boolean;
  /** The error message echoes the key the request presented, as careless servers do. */
  echoKey?: boolean;
}

/** The first value of a request header, '' when absent (for an echoed key). */
export function presented(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** A queued refusal in OpenAI's words (Responses and every Chat Completions server share them). */
export function openAiRefusalBody(refusal: FakeRefusal, headers: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const key = refusal.echoKey ? ` (key ${presented(headers.authorization)})` : '';
  const [message, code] = refusal.status === 429 ? ['Rate limit reached for requests per min. Please try again later.', 'rate_limit_exceeded'] : ['The engine is currently overloaded, please try again later.', null];
  return { error: { message: `${message}${key}`, type: refusal.status === 429 ? 'requests' : 'server_error', param: null, code } };
}
