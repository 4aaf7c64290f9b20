import type { MappedRow } from './mapping/map-result.ts';
import type { SourceRecord } from './types.ts';

/** One source record on its way to the worksheet. */
export interface BatchRow {
  /** The record's ordinal in the run (position.index): the unit of exactly-once. */
  index: number;
  source: SourceRecord;
  mapped: MappedRow;
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
