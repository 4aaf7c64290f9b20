/**
 * Lookup results a caller keeps across batches, so a value seen in batch 1 is not looked
 * up again in batch 900. Only hits are kept: a missing member or related row may be
 * created while the run goes on. Bounded, oldest entries evicted first, so a
 * million-row import with distinct keys does not grow without limit.
 */
export interface ReferenceCache {
  get(scope: string, value: string): string | undefined;
  set(scope: string, value: string, id: string): void;
  readonly size: number;
}

export interface ReferenceCacheOptions {
  /** @defaultValue 100000 */
  maxEntries?: number;
}

export function createReferenceCache(options: ReferenceCacheOptions = {}): ReferenceCache {
  const maxEntries = options.maxEntries ?? 100_000;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`reference cache maxEntries must be a positive integer, got ${maxEntries}`);
  }
  const entries = new Map<string, string>();
  return {
    get(scope, value) {
      return entries.get(`${scope}\u0000${value}`);
    },
    set(scope, value, id) {
      const k = `${scope}\u0000${value}`;
      entries.delete(k);
      entries.set(k, id);
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
