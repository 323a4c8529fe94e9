/**
 * Host and Origin checks for servers that listen on loopback. Binding 127.0.0.1 stops other
 * machines; it does not stop a web page in the user's own browser. DNS rebinding reaches a
 * loopback server under an attacker's host name (so the Host header is not ours), and a
 * cross-site request carries the attacker's Origin. Both are refused with 403 before anything
 * else runs. A request with no Origin (curl, the CLI, same-origin navigation) passes that check.
 */
export interface LoopbackGuard {
  hostAllowed(host: string | undefined): boolean;
  originAllowed(origin: string | undefined): boolean;
}

export function loopbackGuard(port: () => number, extraHosts: readonly string[] = []): LoopbackGuard {
  const hostsFor = (p: number) => ['127.0.0.1', 'localhost', '[::1]', ...extraHosts].map((h) => `${h}:${p}`);
  return {
    hostAllowed(host) {
      if (!host) return false;
      return hostsFor(port()).includes(host.toLowerCase());
    },
    originAllowed(origin) {
      if (origin === undefined) return true;
      return hostsFor(port()).some((h) => origin.toLowerCase() === `http://${h}`);
    },
  };
}
