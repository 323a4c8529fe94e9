/**
 * A peer the plane starts must not outlive it. Signals are not enough: a plane killed with
 * SIGKILL (or by the OOM killer, or a crash) sends nothing, and its peers would go on serving,
 * unlisted and unrevocable, holding their ports. So the plane hands each peer the read end of
 * a pipe (an extra stdio descriptor) and keeps the write end. The kernel closes the write end
 * when the plane's process ends, however it ends; the peer sees end-of-file and stops itself.
 * Node marks the plane's end close-on-exec, so no other child inherits it and keeps it open.
 */
import { Socket } from 'node:net';

/** Returns a function that stops watching (the peer is stopping for another reason). */
export function watchParent(fd: number, onGone: () => void): () => void {
  let fired = false;
  const gone = () => {
    if (fired) return;
    fired = true;
    onGone();
  };
  const pipe = new Socket({ fd, readable: true, writable: false });
  pipe.on('end', gone);
  pipe.on('close', gone);
  pipe.on('error', gone);
  // Nothing is ever written; reading keeps the stream flowing so end-of-file is noticed.
  pipe.resume();
  return () => {
    fired = true;
    pipe.destroy();
  };
}
