/**
 * Results of a coercion kept by source text, for fields whose values repeat. A date
 * column repeats its values (the orders of one day, one month): the 1M-row import of
 * bench/import.ts has 2,016 distinct dates, and each one parsed and formatted again cost
 * a regex match, its captures and half a dozen strings (about 400 of the 5,100 MB it
 * allocated, by a sampling heap profiler). pandas' `to_datetime` caches for the same reason.
 */
import type { Coercer } from './coerce-result.ts';

/** Entries held at most; a full cache starts over. */
export const MEMO_ENTRIES = 1024;
/** Lookups after which a cache that answered fewer than half of them is dropped. */
export const MEMO_PROBE = 4096;
/**
 * Longest text kept. A date is 10 characters; longer values (date-times to the second)
 * rarely repeat. And V8 makes a substring of 13 characters or more a view of the text it
 * was cut from (a CSV chunk of 64 KB): kept as a key, it would keep that text alive.
 */
export const MEMO_MAX_LENGTH = 12;

/**
 * `coerce` with its results kept by source text. Only for pure coercions: the same text
 * always gives the same value (or the same failure, which is immutable). Values other
 * than short strings, and every value once the cache has proven useless for the field
 * (timestamps that never repeat), go straight to `coerce`.
 */
export function memoize(coerce: Coercer): Coercer {
  let memo: Map<string, unknown> | undefined = new Map();
  let lookups = 0;
  let hits = 0;
  return (raw) => {
    if (memo === undefined || typeof raw !== 'string' || raw.length > MEMO_MAX_LENGTH) return coerce(raw);
    lookups += 1;
    let value = memo.get(raw);
    if (value !== undefined) hits += 1;
    else {
      value = coerce(raw);
      if (memo.size >= MEMO_ENTRIES) memo.clear();
      memo.set(raw, value);
    }
    if (lookups === MEMO_PROBE && hits * 2 < lookups) memo = undefined;
    return value;
  };
}
