/**
 * What a two-way run sees of its table, whichever database holds it. Its own module so that
 * table-side.ts (which picks the implementation) and each implementation (mysql-table-side.ts)
 * share it without importing each other.
 */
import type { ZoneClock } from '../../api/zone-clock.ts';

/** A column of the table as the sync needs to know it. */
export interface ColumnInfo {
  /** Holds a wall clock without a zone (`timestamp`, `date`). */
  zoneLess: boolean;
  /** Written by the database only (`GENERATED ALWAYS`). */
  generated: boolean;
}

/** One record of the table: its key as text and the values of the columns read. */
export interface TableRecord {
  key: string;
  values: Record<string, unknown>;
}

/** A batch of writes to the table, applied in one transaction. */
export interface TableWrites {
  updates: Array<{ key: string; set: Record<string, unknown> }>;
  inserts: Array<{ ref: string; values: Record<string, unknown> }>;
  deletes: string[];
}

/** A record of a batch the side would not take (a value the platform or the database refused). */
export interface RefusedWrite {
  /** The update's or delete's key, or the insert's ref. */
  ref: string;
  /** The field refused, as the job names it on this side, when known. */
  field?: string;
  /** The platform's error code, or MySQL's errno; a PostgreSQL SQLSTATE is in `reason`. */
  errorCode?: number;
  reason: string;
}

/** What a batch wrote: each insert's new key by its ref, and the records refused. */
export interface TableWritten {
  created: Map<string, string>;
  /** A table's batch is still one transaction: a refused record is left out under a savepoint. */
  refused: RefusedWrite[];
}

/** A record of a key scan: the columns asked for, and the row hash when one was asked for. */
export interface ScannedRecord extends TableRecord {
  hash?: string;
}

/** The reads of an incremental run (sql-table-scans.ts); a side without them is read whole. */
export interface TableScans {
  /**
   * Key, `columns` and (given `hashColumns`) a short hash of those columns, of every record,
   * each handed to `each` as read (a big table's scan is never held whole).
   */
  scanKeys(
    columns: readonly string[],
    hashColumns: readonly string[] | undefined,
    each: (record: ScannedRecord) => void,
  ): Promise<void>;
  /** Records whose `column` is at or after `ms` (or null); `wallClock` is the zone of a zone-less column. */
  readChanged(
    columns: readonly string[],
    since: { column: string; ms: number; wallClock: ZoneClock | undefined },
  ): Promise<TableRecord[]>;
  /**
   * The time (epoch ms) on the clock that stamps the table's update times, read at the
   * start of a run's reads: the database's, or the start of its oldest writing transaction
   * in progress when that is earlier and visible (sql-table-scans.ts); undefined when not
   * known. The table's cursor is capped by it (cursor-cap.ts).
   */
  clock(): Promise<number | undefined>;
  /** The records of `keys` still in the table. */
  readKeys(
    columns: readonly string[],
    keys: readonly string[],
    hashColumns?: readonly string[],
  ): Promise<ScannedRecord[]>;
}

/** One table of a two-way job: its columns, its records, and batches written to it. */
export interface TableSide {
  columns: ReadonlyMap<string, ColumnInfo>;
  /** Every record of the table, `columns` read (key included). */
  readAll(columns: readonly string[]): Promise<TableRecord[]>;
  /** Applies one batch (a table: in one transaction); answers each insert's new key by ref, and the refused. */
  write(batch: TableWrites): Promise<TableWritten>;
  close(): Promise<void>;
  /** Incremental reads; absent: every run reads the side whole. */
  scans?: TableScans;
}
