/**
 * Types shared across the sync engine: what sources yield, what the mapping consumes
 * and produces, and the normalised row that every worksheet read becomes.
 */

/** Where a record came from, so a dead letter can point a user at it. */
export interface SourcePosition {
  /** 0-based ordinal of the record within the source run. */
  index: number;
  /** 1-based line in a text file (csv: the physical line the record starts on). */
  line?: number;
  /** Page number or cursor value for paged sources. */
  page?: number | string;
  /** The source's own identifier of the record, when it has one (a row id, a primary key). */
  id?: string;
  /** What `id` is the value of, shown before it: a SQL source's keyColumn, `rowid` for a worksheet. */
  idColumn?: string;
}

/** One record read from a source. */
export interface SourceRecord {
  data: Record<string, unknown>;
  position: SourcePosition;
  /** The value of the incremental cursor column for this record, when the job has one. */
  cursor?: unknown;
}

/** A source is an async generator of records (the faros/airbyte shape). */
export type Source = AsyncIterable<SourceRecord>;

/** One target-field mapping, after the job spec's shorthand is expanded. */
export interface FieldMapping {
  /** Target field id or alias (the key in the job spec's `fields`). */
  target: string;
  /** Source column; absent when `value` is a constant. */
  from?: string;
  /** A constant value. */
  value?: unknown;
  /** Date/datetime input format in dayjs tokens (DD/MM/YYYY, YYYY-MM-DD HH:mm). */
  format?: string;
  /** IANA zone the source's date/datetime values are in (default UTC). */
  timezone?: string;
  /** Select fields: create options missing from the structure instead of rejecting. */
  createOptions?: boolean;
  /** Relation fields: the related worksheet's field used to find the related row. */
  relationKey?: string;
  /**
   * Member fields: how to find the account: `accountId` as is, or `name` (the exact
   * full name, through `/v3/users/lookup`). `email` is refused: the platform masks
   * emails in its lookups (platform-shapes §9 [C]); use `lookupTable` instead.
   */
  lookupBy?: 'accountId' | 'name' | 'email';
  /** Member and department fields: source value → accountId (department id), for values no lookup can find. */
  lookupTable?: Record<string, string>;
  /** Value used when the source value is empty. */
  default?: unknown;
  /** Take spaces off both ends of a text value before anything else. */
  trim?: boolean;
  /** Source value → value written (`{ ja: true, nein: false }`); exact text first, then ignoring case. */
  map?: Record<string, unknown>;
  /** Texts read as true / false (a Checkbox's `Ja` / `Nein`), ignoring case. */
  trueValues?: string[];
  falseValues?: string[];
  /** Number, Currency and Rating fields: the decimal mark of the source (`,` reads `1.234,50`). @defaultValue `'.'` */
  decimal?: '.' | ',';
}
