/**
 * What a two-way run sees of its table, whichever database holds it. Its own module so that
 * table-side.ts (which picks the implementation) and each implementation (mysql-table-side.ts)
 * share it without importing each other.
 */

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

/** One table of a two-way job: its columns, its records, and batches written to it. */
export interface TableSide {
  columns: ReadonlyMap<string, ColumnInfo>;
  /** Every record of the table, `columns` read (key included). */
  readAll(columns: readonly string[]): Promise<TableRecord[]>;
  /** Applies one batch in one transaction; answers each insert's new key by its ref. */
  write(batch: TableWrites): Promise<Map<string, string>>;
  close(): Promise<void>;
}
