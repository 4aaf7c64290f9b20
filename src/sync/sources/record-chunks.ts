/**
 * The chunk protocol of a source: besides its records one at a time (`Source`, an async
 * iterable), a source may hand them over a chunk (an array) at a time under the
 * {@link recordChunks} key. Per record, an async iterable costs a promise, an iterator
 * result and a microtask at every level it passes through; a million-row CSV import
 * spent about a second of its read on that alone (issue 12). Readers that can use it
 * (read-batches.ts) ask {@link chunksOf}; every other consumer iterates records as before.
 */
import type { SourceRecord } from '../model/types.ts';

/** The key of a source's chunk method: `source[recordChunks]()` reads the source from the start. */
export const recordChunks: unique symbol = Symbol('rowbridge.recordChunks');

/**
 * A source that also reads a chunk at a time. Both ways give the same records in the
 * same order, with the same errors; a consumer uses one of them, once. Breaking out of
 * either closes what the source holds open.
 */
export interface ChunkedSource<T extends SourceRecord = SourceRecord> extends AsyncIterable<T> {
  [recordChunks](): AsyncIterable<readonly T[]>;
}

/** Whether `source` offers its records a chunk at a time. */
export function hasRecordChunks<T extends SourceRecord>(
  source: AsyncIterable<T>,
): source is ChunkedSource<T> {
  return typeof (source as Partial<ChunkedSource<T>>)[recordChunks] === 'function';
}

/** The chunks of `source` when it offers them, else undefined (read it record by record). */
export function chunksOf<T extends SourceRecord>(
  source: AsyncIterable<T>,
): AsyncIterable<readonly T[]> | undefined {
  return hasRecordChunks(source) ? source[recordChunks]() : undefined;
}

/**
 * A source over a chunk reader: `records` for consumers that take one record at a time,
 * `read()` for those that take chunks. `signal` is checked before each record the
 * one-at-a-time way, as a reader without chunks does between records; the chunk reader
 * checks it once per chunk (a chunk is built without awaiting, so no abort can land
 * inside one).
 */
export function withRecordChunks<T extends SourceRecord>(
  read: () => AsyncGenerator<readonly T[]>,
  signal?: AbortSignal,
): AsyncGenerator<T> & ChunkedSource<T> {
  async function* records(): AsyncGenerator<T> {
    for await (const chunk of read()) {
      for (const record of chunk) {
        signal?.throwIfAborted();
        yield record;
      }
    }
  }
  return Object.assign(records(), { [recordChunks]: read });
}
