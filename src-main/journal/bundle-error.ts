/**
 * A bundle that cannot be read or written as one (no such file, not a bundle, a scope beyond
 * the journal). Its own module so the worker pool (journal-worker-pool.ts) can rebuild it from
 * a worker's answer without importing bundle-verify.ts, which starts workers itself.
 */
export class BundleError extends Error {
  override readonly name = 'BundleError';
}
