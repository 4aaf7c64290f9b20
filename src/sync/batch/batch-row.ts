import type { FieldValue } from '../../api/types.ts';
import type { MappedRow, PendingLookup } from '../mapping/map-result.ts';
import type { SourcePosition, SourceRecord } from '../model/types.ts';

/** One source record on its way to the worksheet. */
export interface BatchRow {
  /** The record's ordinal in the run (position.index): the unit of exactly-once. */
  index: number;
  source: SourceRecord;
  mapped: MappedRow;
}

/**
 * A batch row as a worker writes it: each of what writing reads of a row, read on its own
 * without building the rest. What a batch job's rows are (./unpack-columns.ts): views of
 * the job's columns, whose `source` and `mapped` are built at each read.
 */
export interface RowToWrite extends BatchRow {
  /** `source.position`. */
  readonly position: SourcePosition;
  /** `mapped.key`. */
  readonly key: string | undefined;
  /** `mapped.hash`. */
  readonly hash: string;
  /** `mapped.fields` (as lookups resolved them, once `mapped` is assigned). */
  readonly fields: FieldValue[];
  /** `mapped.pending`. */
  readonly pending: PendingLookup[] | undefined;
}

/**
 * A row built whole, as {@link RowToWrite} reads it: what planning resolves before its
 * sample. Each read goes through `mapped`, so a mapping assigned later (lookups resolved)
 * is what it reads.
 */
export function rowToWrite(row: BatchRow): RowToWrite {
  return {
    index: row.index,
    source: row.source,
    mapped: row.mapped,
    get position() {
      return this.source.position;
    },
    get key() {
      return this.mapped.key;
    },
    get hash() {
      return this.mapped.hash;
    },
    get fields() {
      return this.mapped.fields;
    },
    get pending() {
      return this.mapped.pending;
    },
  };
}

/** A row on its way to the dead-letter store: the mapping may have refused it (no payload). */
export interface DeadRow {
  index: number;
  source: SourceRecord;
  mapped?: MappedRow;
}

/** Why a row could not be written, as a dead letter records it. */
export interface Failure {
  message: string;
  errorCode?: number;
  field?: string;
}
