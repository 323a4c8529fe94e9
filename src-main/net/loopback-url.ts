/**
 * Whether a URL is plain http to this machine's loopback interface: 127.0.0.0/8, ::1 or
 * `localhost`. The CLI sends the bridge token to the URL plane.json names, so it sends it only
 * to such a URL: never to another host, never through a proxy-looking `user@host` form.
 * Parsed by the WHATWG URL parser, which normalises the spellings an attacker would try
 * (`127.1`, `0x7f.1`, upper case, a trailing dot is kept and so refused).
 */
import { isIPv4 } from 'node:net';

export function isLoopbackHttpUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || url.username !== '' || url.password !== '') return false;
  const host = url.hostname;
  if (host === 'localhost' || host === '[::1]') return true;
  return isIPv4(host) && host.startsWith('127.');
}
