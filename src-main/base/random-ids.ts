/**
 * Random ids drawn from a pool of the CSPRNG's bytes, refilled 4 KB at a time.
 *
 * A run's id is `run-` and 20 hex digits: the clock's milliseconds, then six random bytes (see
 * newRunId), and every call a peer answers admits a run. `crypto.randomBytes(n)` asks the OS
 * for ten bytes each time: measured in a loaded peer at about 33 µs a call (5 µs in a tight
 * loop), against 0.1 µs from a pool, which is how Node's own `randomUUID` draws its randomness.
 * The bytes are the same CSPRNG's; each is handed out once and never again.
 *
 * For ids and journaled random values only, which are public once issued. Secrets (tokens,
 * keys) take `randomBytes` directly, so none of their bytes ever sit in a shared buffer.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
/** Bytes of the pool already handed out; at POOL_BYTES the pool is refilled before the next take. */
let used = POOL_BYTES;

/** Where `count` fresh bytes start in the pool (refilled first when too few are left). */
function take(count: number): number {
  if (!Number.isInteger(count) || count < 1 || count > POOL_BYTES) throw new RangeError(`random-ids: ${count} bytes is not between 1 and ${POOL_BYTES}`);
  if (used + count > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const at = used;
  used += count;
  return at;
}

/** `count` random bytes as 2 × count lowercase hex digits. */
export function randomHex(count: number): string {
  const at = take(count);
  return pool.toString('hex', at, at + count);
}

/** A uniform random number in [0, 1), from 48 random bits. */
export function randomUnit(): number {
  const at = take(6);
  return pool.readUIntBE(at, 6) / 2 ** 48;
}

/** Run ids carry this many bits of the clock: milliseconds, wrapping every 49.7 days. */
const TIME_BITS = 32;

/**
 * A new run's id: `run-`, 8 hex digits of the clock's milliseconds (modulo 2^32) and 12 random
 * hex digits (48 bits), 20 digits in all as RunIdSchema (src-shared/vocabulary/ids.ts) has
 * always required, so every id ever written still reads as one.
 *
 * Why the clock leads: the journal indexes every record by (run_id, seq) (records_by_run), and
 * a B-tree keyed by a random string puts each new run on a random leaf. A peer's commit of
 * sixteen pings then dirtied sixteen index pages scattered across the whole index, more than
 * half of what the commit wrote to the WAL (at 128k records: 43 WAL frames a commit of sixteen
 * four-record runs with random ids, 18 with rising ones), and more the longer the journal (the
 * cost migration 005 removed from the record hashes' UNIQUE indexes, here per run). Ids that rise
 * with time land at the index's right edge, where one page takes a commit's runs (measured:
 * 12-13 µs a record inserted with random ids against 6.6 µs with rising ones, same rows). A wrap
 * starts a new region of the index that rises the same way.
 *
 * Why 48 random bits are still enough: an id is no secret once issued (the UI, the journal, its
 * exports and A2A's task ids show it) and what a request may do to a run is decided by who
 * asks (another caller's task is TaskNotFound, a2a-continue.test.ts), so the random part is
 * there to keep anyone from naming a run before it is admitted: guessing the id of a run
 * admitted in a known millisecond takes 2^47 tries on average. Within this process no id is
 * issued twice (the ids of the current millisecond are remembered, and a repeat is drawn
 * again); two processes writing one data dir in the same millisecond share an id with odds of
 * 2^-48 a pair.
 */
export function newRunId(now: number = Date.now()): string {
  const ms = Math.floor(now);
  if (ms !== issuedMs) {
    issuedMs = ms;
    issuedThisMs.clear();
  }
  const time = (ms % 2 ** TIME_BITS).toString(16).padStart(TIME_BITS / 4, '0');
  let id: string;
  do id = `run-${time}${randomHex(6)}`;
  while (issuedThisMs.has(id));
  issuedThisMs.add(id);
  return id;
}

let issuedMs = Number.NaN;
const issuedThisMs = new Set<string>();
