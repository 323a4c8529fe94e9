/**
 * Best-effort: open the UI in the user's browser. A machine without a desktop (CI, a server)
 * has no opener, and that is fine: the URL is printed on its own line for a person or a script.
 * Nothing here may fail the plane, and the opener's output is discarded so it cannot mix
 * with the plane's own lines.
 */
import { spawn } from 'node:child_process';
import { platform } from 'node:os';

export function openBrowser(url: string): void {
  const [command, args] =
    platform() === 'darwin' ? ['open', [url]] : platform() === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No opener on this machine.
  }
}
