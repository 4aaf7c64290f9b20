/**
 * The shapes a two-way plan is made from and made of: both sides' records in comparison
 * form, the run's state and settings, and every write, create, delete and conflict the plan
 * decides. Their own module so that plan-two-way.ts (which decides), two-way-run.ts (which
 * carries out) and plan-summary.ts (which shows) share them without the decision logic.
 */
import type { Conflict, Intent, Link, PendingDelete } from './link-store.ts';
import type { ColumnInfo } from './table-side-types.ts';
import type { TwoWayField } from './two-way-fields.ts';

/** One record of one side, in comparison form. */
export interface SideRecord {
  /** Table key or row id. */
  id: string;
  /** Table: the row as read; worksheet: the values in a person's form. */
  values: Record<string, unknown>;
  comparable: Record<string, string>;
  hashes: Record<string, string>;
  /** The match key's parts joined; '' when a part is empty. */
  matchKey: string;
  updatedAt?: number | undefined;
}

/** One side's quiet records (TwoWayInput.quiet): how many. */
export interface QuietKeys {
  count: number;
}

/** The state and settings a plan is made from. */
export interface TwoWayInput {
  fields: readonly TwoWayField[];
  columns: ReadonlyMap<string, ColumnInfo>;
  source: readonly SideRecord[];
  worksheet: readonly SideRecord[];
  links: ReadonlyMap<string, Link>;
  intents: ReadonlyMap<string, Intent>;
  conflicts: ReadonlyMap<string, Conflict>;
  pendingDeletes: ReadonlyMap<string, PendingDelete>;
  /**
   * Linked records unchanged on both sides since the last run, not read whole (read-sides.ts):
   * their links are not in `links`, and only their number counts (linked, and part of each
   * side's size for the delete threshold). None shares its match key with an unlinked
   * record: read-sides reads such a record whole, so new records are matched against
   * records read whole only.
   */
  quiet?: { links: number; source: QuietKeys; worksheet: QuietKeys };
  deletes: 'both' | 'none';
  deleteThreshold: number;
  now: string;
}

/** A write of some fields of a linked record. */
export interface LinkedWrite {
  link: Link;
  /** Final state of the link once both sides are written. */
  next: Link;
  /** Targets copied into the worksheet, and the table record they come from (overrides applied). */
  toWorksheet: string[];
  worksheetRecord: Record<string, unknown>;
  /** Columns set in the table. */
  toSource: Record<string, unknown>;
}

/** Everything one run will do, decided before any write. */
export interface TwoWayPlan {
  counts: { matched: number; sourceOnly: number; worksheetOnly: number; ambiguous: number; linked: number };
  /** Links saved as they are (first match, a settled field). */
  settle: Link[];
  writes: LinkedWrite[];
  /** Records to create in the worksheet (from the table) and in the table (from the worksheet). */
  createInWorksheet: Array<{
    record: SideRecord;
    base: Record<string, string>;
    last?: Record<string, string>;
  }>;
  createInSource: Array<{
    record: SideRecord;
    base: Record<string, string>;
    last?: Record<string, string>;
    values: Record<string, unknown>;
  }>;
  deleteInWorksheet: Link[];
  deleteInSource: Link[];
  dropLinks: Link[];
  /** Deletes held back, and held-back deletes to forget (the record came back, or done). */
  holdDeletes: PendingDelete[];
  forgetDeletes: string[];
  raiseConflicts: Conflict[];
  clearConflicts: string[];
  /** Records deleted on one side and edited on the other: kept and created again. */
  kept: Array<{ deletedOn: 'source' | 'worksheet'; key: string; rowId: string }>;
}
