import { isLaterCursor } from '../sources/cursor.ts';
import { keyFields } from '../mapping/compose-key.ts';
import { mapRecord } from '../mapping/map-record.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';
import { chunksOf } from '../sources/record-chunks.ts';
import type { SourceItem } from '../sources/source-error.ts';
import type { SourceRecord } from '../model/types.ts';
import type { BatchRow, Failure } from '../batch/batch-row.ts';

/** A record the mapping refused, or whose key an earlier record already had. */
export interface RejectedRecord {
  index: number;
  source: SourceRecord;
  failure: Failure;
}

export interface ReadProgress {
  read: number;
  /** Greatest incremental cursor value seen (numbers compared as numbers, else as text). */
  cursor: unknown;
}

export interface ReadBatchesOptions {
  plan: MappingPlan;
  batchSize: number;
  /** Called with records that cannot be written, before the batch holding their neighbours. */
  onRejected(records: RejectedRecord[]): Promise<void>;
  progress: ReadProgress;
  /**
   * A record with a cell larger than this (UTF-8 bytes) is rejected with the reason:
   * batch job data in Redis never holds more than its batch. @defaultValue 1 MiB
   */
  maxCellBytes?: number;
}

/** The first cell of `data` over `limit` bytes, if any (strings measured only when they could be). */
function oversizedCell(
  data: Record<string, unknown>,
  limit: number,
): { column: string; bytes: number } | undefined {
  // for...in over the record, not Object.entries: no array per cell on the read's hot path.
  for (const column in data) {
    if (!Object.hasOwn(data, column)) continue;
    const value = data[column];
    let bytes = 0;
    // A UTF-16 string of n units is at most 3n bytes of UTF-8: most cells need no count.
    if (typeof value === 'string') bytes = value.length * 3 > limit ? Buffer.byteLength(value, 'utf8') : 0;
    else if (typeof value === 'object' && value !== null)
      bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
    if (bytes > limit) return { column, bytes };
  }
  return undefined;
}

function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

function describeRejection(
  errors: Array<{ field: string; column: string | undefined; value: string; reason: string }>,
): Failure {
  const message = errors
    .map(
      (e) =>
        `${e.field}${e.column === undefined ? '' : ` (column ${e.column})`}: ${e.reason}${e.value === '' || e.reason.includes(e.value) ? '' : `; got "${e.value}"`}`,
    )
    .join('; ');
  return { message, ...(errors[0] === undefined ? {} : { field: errors[0].field }) };
}

/** Where a record is, compactly: a line number, or -(index + 1) for sources without lines. */
function placeOf(source: SourceRecord): number {
  return source.position.line ?? -(source.position.index + 1);
}

function describePlace(place: number): string {
  return place < 0 ? `record ${-place}` : `line ${place}`;
}

/**
 * Maps a source into batches of `batchSize` mapped rows. Records the mapping refuses
 * are handed to `onRejected` (they become dead letters, the run goes on). A key seen
 * earlier in the same run is refused too: two rows racing for one key in two batches
 * is how a sync duplicates rows. A source that reads a chunk at a time (record-chunks.ts)
 * is read that way, with the same results.
 */
export async function* readBatches(
  source: AsyncIterable<SourceRecord>,
  options: ReadBatchesOptions,
): AsyncGenerator<BatchRow[]> {
  const { plan, batchSize, progress } = options;
  const maxCellBytes = options.maxCellBytes ?? 1_048_576;
  const keyed = plan.keyIndex !== undefined;
  const keyField = keyFields(plan)
    .map((f) => f.target)
    .join(' + ');
  // Key → where it was first seen: one number per key keeps a million-key run small.
  const firstSeen = new Map<string, number>();
  let batch: BatchRow[] = [];
  let rejected: RejectedRecord[] = [];

  /** Maps one record into `batch` or `rejected`: the same for both ways of reading. */
  function take(record: SourceRecord): void {
    progress.read += 1;
    const index = record.position.index;
    if (
      record.cursor !== undefined &&
      record.cursor !== null &&
      isLaterCursor(record.cursor, progress.cursor)
    ) {
      progress.cursor = record.cursor;
    }
    const unreadable = (record as SourceItem).error;
    if (unreadable !== undefined) {
      // The source could not parse this record (wrong column count, bad JSON line): it
      // is dead-lettered with the source's own message and the read goes on.
      rejected.push({ index, source: record, failure: { message: unreadable.message } });
      return;
    }
    const oversized = oversizedCell(record.data, maxCellBytes);
    if (oversized !== undefined) {
      rejected.push({
        index,
        source: record,
        failure: {
          field: oversized.column,
          message: `column ${oversized.column} holds ${sizeOf(oversized.bytes)}, over the ${sizeOf(maxCellBytes)} a cell may hold (ROWBRIDGE_MAX_CELL_BYTES); this record was not written`,
        },
      });
      return;
    }
    // The record is the map context: it has the position, and no object per record is made for it.
    const result = mapRecord(plan, record.data, record);
    if (!result.ok) {
      rejected.push({ index, source: record, failure: describeRejection(result.errors) });
    } else if (keyed && result.key !== undefined && firstSeen.has(result.key)) {
      rejected.push({
        index,
        source: record,
        failure: {
          field: keyField,
          message: `duplicate key ${keyField} = "${result.key}": ${describePlace(firstSeen.get(result.key)!)} has it too; this record was not written`,
        },
      });
    } else if (keyed && result.key === undefined) {
      rejected.push({
        index,
        source: record,
        failure: { field: keyField, message: `key field ${keyField} is empty` },
      });
    } else {
      if (keyed && result.key !== undefined) firstSeen.set(result.key, placeOf(record));
      batch.push({ index, source: record, mapped: result });
    }
  }

  /** The rejected records so far, handed over (before the batch holding their neighbours). */
  async function handOverRejected(): Promise<void> {
    await options.onRejected(rejected);
    rejected = [];
  }
  /** The batch so far, to yield; a new one starts. */
  function cut(): BatchRow[] {
    const full = batch;
    batch = [];
    return full;
  }

  // Both loops hand over full lists the same way after each record.
  const chunks = chunksOf(source);
  if (chunks !== undefined) {
    for await (const chunk of chunks) {
      for (const record of chunk) {
        take(record);
        if (rejected.length >= batchSize) await handOverRejected();
        if (batch.length >= batchSize) yield cut();
      }
    }
  } else {
    for await (const record of source) {
      take(record);
      if (rejected.length >= batchSize) await handOverRejected();
      if (batch.length >= batchSize) yield cut();
    }
  }
  if (rejected.length > 0) await handOverRejected();
  if (batch.length > 0) yield cut();
}
