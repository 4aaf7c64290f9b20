/**
 * The read of a two-way run: what the planner (plan-two-way.ts) gets of both sides.
 *
 * Without saved cursors (the first run, a job whose sides, fields or key changed, a side
 * without incremental reads) both sides are read whole. With them, a run reads:
 * - each side's keys whole, and nothing else of an unchanged record: the worksheet's row
 *   ids and key fields (worksheet-scans.ts), the table's `SELECT keyColumn, <key columns>`
 *   (plus a short hash of the mapped columns when the table has no `updatedAtColumn`);
 *   a linked record missing from its side's keys was deleted there;
 * - what changed since the cursors: rows with `_updatedAt` after the worksheet's cursor,
 *   records with `updatedAtColumn` after the table's (or whose hash differs from the one
 *   stored), and whole, for every changed linked record, its other side too;
 * - whole, every record that is not linked (new, or waiting on a key), every record of a
 *   link with a conflict, a pending write (a stopped run) or a recheck (cursor store).
 * A linked record changed on neither side is left out of the plan and only counted
 * (link-slots.ts holds such records in brief), unless a new record has its match key:
 * then it is read whole too, so the planner sees both. rowbridge's own writes move
 * `_updatedAt` (and a touched `updatedAtColumn`): such a record is read again and
 * compared with its hashes like any other, so it is never taken for an edit.
 *
 * A cursor is the earliest update time the next run reads from: the millisecond after the
 * latest one read, capped at the start of the reads minus a margin (cursor-cap.ts), so a
 * record edited while the sides were being read is read again by the next run. Each side's
 * start is read on the clock that stamps its times: the worksheet's on the platform's (the
 * `Date` of its answers), the table's on the database's (sql-table-scans.ts), never this
 * machine's unless those are unknown: a local clock ahead of theirs would lose edits.
 */
import type { Filter, NormalisedRow } from '../../api/types.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';
import { cursorCap } from '../sources/cursor-cap.ts';
import type { Conflict, Link, LinkIndex } from './link-store.ts';
import { createLinkSlots } from './link-slots.ts';
import type { Side } from './link-slots.ts';
import type { ScannedRecord, TableRecord, TableSide } from './table-side-types.ts';
import type { TwoWayCursors } from './two-way-cursors.ts';
import { instantOf } from './two-way-fields.ts';
import type { TwoWayField } from './two-way-fields.ts';
import type { SideRecord, TwoWayInput } from './two-way-plan-types.ts';
import { byIdFilters, changedSinceFilter } from './worksheet-scans.ts';
import type { KeyScanRow } from './worksheet-scans.ts';

/** Builds a side's record in comparison form (two-way-run.ts). */
export type MakeRecord = (
  id: string,
  values: Record<string, unknown>,
  side: 'source' | 'worksheet',
  at?: number,
) => SideRecord;

/** What the read needs. */
export interface ReadSidesDeps {
  table: TableSide;
  fields: readonly TwoWayField[];
  keyTargets: readonly string[];
  updatedAtColumn: string | undefined;
  /** The zone `updatedAtColumn` is read in when it holds no zone. */
  updatedClock: ZoneClock;
  record: MakeRecord;
  /** The match key of a key scan's values (side-record.ts). */
  matchKeyOf: (values: Record<string, unknown>, side: 'source' | 'worksheet') => string;
  /** The worksheet's rows in the run's read form, all of them or those of `filter`. */
  readWorksheet: (filter?: Filter) => AsyncIterable<NormalisedRow>;
  scanWorksheetKeys: (fieldIds: readonly string[]) => AsyncIterable<KeyScanRow>;
  /** The organisation's zone (the worksheet's `_updatedAt` filter is a wall clock in it). */
  timeZone: string;
  /** The links in brief, and a way to read some of them whole (link-store.ts). */
  links: LinkIndex & { get(keys: readonly string[]): Promise<Map<string, Link>> };
  conflicts: ReadonlyMap<string, Conflict>;
  /** The saved cursors (undefined: read whole). */
  cursors: TwoWayCursors | undefined;
  /** Table without updatedAtColumn: hands each stored row hash (key, hash) to `each`. */
  storedRowHashes: ((each: (key: string, hash: string) => void) => Promise<void>) | undefined;
  /** The platform's time now (its client's `serverTime`), undefined when not known. */
  platformTime: () => number | undefined;
  /** How far behind its side's clock at the start of the reads a cursor is capped. */
  marginMs: number;
}

/** Both sides as the planner takes them, and what the cursors can be saved as. */
export interface SidesRead {
  reads: 'whole' | 'changes';
  source: SideRecord[];
  worksheet: SideRecord[];
  /** Records read whole (the rest are linked records unchanged on both sides). */
  readWhole: { source: number; worksheet: number };
  /** The links the plan decides on: all of them after a whole read, else those touched. */
  links: ReadonlyMap<string, Link>;
  /** Linked records unchanged on both sides, left out of the plan but for their match keys. */
  quiet: NonNullable<TwoWayInput['quiet']>;
  /** Cursors this read reached (saved by the run once its writes are recorded). */
  next: { worksheet: number; source?: number };
  /**
   * Table without updatedAtColumn, the row hashes to store: after a whole read `all` of
   * them; after a read of changes, those that differ from the stored ones (`set`) and the
   * keys of records gone (`drop`).
   */
  rowHashes?: { all: Map<string, string> } | RowHashChanges;
}

/** Row hashes changed since the stored ones, and those of records gone. */
export interface RowHashChanges {
  set: Map<string, string>;
  drop: string[];
}

/** Reads both sides, whole or since the cursors. */
export async function readSides(d: ReadSidesDeps): Promise<SidesRead> {
  const cap = {
    worksheet: cursorCap(d.platformTime(), d.marginMs),
    source: cursorCap(d.updatedAtColumn === undefined ? undefined : await d.table.scans?.clock(), d.marginMs),
  };
  const columns = d.fields.flatMap((f) => (f.column === undefined ? [] : [f.column]));
  const hashColumns = d.updatedAtColumn === undefined ? [...new Set(columns)] : undefined;
  const wanted = d.updatedAtColumn === undefined ? columns : [...columns, d.updatedAtColumn];
  const scans = d.table.scans;
  const sourceFull = new Map<string, ScannedRecord>();
  const rowsFull = new Map<string, NormalisedRow>();
  const timeOf = (r: TableRecord) =>
    d.updatedAtColumn === undefined ? undefined : instantOf(r.values[d.updatedAtColumn], d.updatedClock);

  if (d.cursors === undefined || scans === undefined) {
    if (scans === undefined) for (const r of await d.table.readAll(wanted)) sourceFull.set(r.key, r);
    else await scans.scanKeys(wanted, hashColumns, (r) => sourceFull.set(r.key, r));
    for await (const row of d.readWorksheet()) rowsFull.set(row.id, row);
    const links = await d.links.get(d.links.keys);
    return finish('whole', { links: 0, source: { count: 0 }, worksheet: { count: 0 } }, links, undefined);
  }

  const cursors = d.cursors;
  const keyFields = d.fields.filter((f) => d.keyTargets.includes(f.target));
  const keyColumns = keyFields.flatMap((f) => (f.column === undefined ? [] : [f.column]));
  // A linked record's keys are kept in brief (link-slots.ts): a big table's key scan must
  // not stay in memory whole. Unlinked records are read whole anyway.
  const slots = createLinkSlots(d.links);
  await d.storedRowHashes?.((key, hash) => slots.storeRowHash(key, hash));
  const unlinkedSource: string[] = [];
  const hashes: RowHashChanges = { set: new Map(), drop: [] };
  const changedSource = new Set<string>();
  const byTime = d.updatedAtColumn !== undefined && cursors.source !== undefined;
  await scans.scanKeys(keyColumns, hashColumns, (r) => {
    if (!slots.see('source', r.key, d.matchKeyOf(r.values, 'source'))) unlinkedSource.push(r.key);
    const changed = r.hash === undefined || slots.rowHashChanged(r.key, r.hash);
    if (r.hash !== undefined && changed) hashes.set.set(r.key, r.hash);
    if (!byTime && changed) changedSource.add(r.key);
  });
  if (byTime) {
    const zoneLess = d.table.columns.get(d.updatedAtColumn!)?.zoneLess === true;
    for (const r of await scans.readChanged(wanted, {
      column: d.updatedAtColumn!,
      ms: cursors.source!,
      wallClock: zoneLess ? d.updatedClock : undefined,
    })) {
      sourceFull.set(r.key, r);
      changedSource.add(r.key);
    }
  }
  const unlinkedRows: string[] = [];
  for await (const row of d.scanWorksheetKeys(keyFields.map((f) => f.fieldId)))
    if (!slots.see('worksheet', row.id, d.matchKeyOf(row.values, 'worksheet'))) unlinkedRows.push(row.id);
  const changedRows = new Set<string>();
  // `_updatedAt` is whole seconds and the platform's filter too: from the cursor's second
  // rounded up (see below why that skips nothing), checked here again.
  const since = Math.ceil(cursors.worksheet / 1000) * 1000;
  for await (const row of d.readWorksheet(changedSinceFilter(since, d.timeZone))) {
    if (row.updatedAt !== undefined && row.updatedAt.getTime() < cursors.worksheet) continue;
    rowsFull.set(row.id, row);
    changedRows.add(row.id);
  }

  const recheck = new Set(cursors.recheck);
  const needSource = new Set(unlinkedSource);
  const needRows = new Set(unlinkedRows);
  const quiet = { links: 0, source: { count: 0 }, worksheet: { count: 0 } };
  const setQuiet = (slot: number, side: Side) => {
    slots.setQuiet(slot, side);
    quiet[side].count++;
  };
  const readWhole = async (keys: Iterable<string>, rowIds: Iterable<string>) => {
    const fetch = [...keys].filter((k) => !sourceFull.has(k));
    if (fetch.length > 0)
      for (const r of await scans.readKeys(wanted, fetch, hashColumns)) sourceFull.set(r.key, r);
    for (const filter of byIdFilters([...rowIds].filter((id) => !rowsFull.has(id))))
      for await (const row of d.readWorksheet(filter)) rowsFull.set(row.id, row);
  };
  const touchedKeys: string[] = [];
  for (let slot = 0; slot < slots.size; slot++) {
    const key = slots.key(slot);
    const rowId = slots.rowId(slot);
    const special = d.links.special.get(key);
    const s = slots.seen(slot, 'source') || sourceFull.has(key);
    const w = slots.seen(slot, 'worksheet') || rowsFull.has(rowId);
    const touched =
      special?.pending !== undefined ||
      !s ||
      !w ||
      changedSource.has(key) ||
      changedRows.has(rowId) ||
      recheck.has(key) ||
      d.conflicts.has(`fields:${key}`);
    const gone = special?.gone !== undefined;
    if (!touched || gone) {
      // Left out of the plan: linked, unchanged (or one side gone under `deletes: none`).
      if (!gone) quiet.links++;
      if (slots.seen(slot, 'source') && !sourceFull.has(key)) setQuiet(slot, 'source');
      if (slots.seen(slot, 'worksheet') && !rowsFull.has(rowId)) setQuiet(slot, 'worksheet');
      if (gone) touchedKeys.push(key);
      continue;
    }
    touchedKeys.push(key);
    if (s) needSource.add(key);
    if (w) needRows.add(rowId);
  }
  await readWhole(needSource, needRows);

  // A quiet record sharing its match key with a new record is read whole too, so the
  // planner matches new records against records read whole only.
  const newKeys: string[] = [];
  for (const r of sourceFull.values())
    if (!slots.linkedKey(r.key)) newKeys.push(d.matchKeyOf(r.values, 'source'));
  for (const row of rowsFull.values())
    if (!slots.linkedRow(row.id)) newKeys.push(d.matchKeyOf(row.values, 'worksheet'));
  const alsoSource: string[] = [];
  const alsoRows: string[] = [];
  for (const slot of slots.quietMatching(newKeys)) {
    const key = slots.key(slot);
    if (d.links.special.get(key)?.gone === undefined) {
      quiet.links--;
      touchedKeys.push(key);
    }
    if (slots.isQuiet(slot, 'source')) {
      quiet.source.count--;
      alsoSource.push(key);
    }
    if (slots.isQuiet(slot, 'worksheet')) {
      quiet.worksheet.count--;
      alsoRows.push(slots.rowId(slot));
    }
  }
  await readWhole(alsoSource, alsoRows);
  hashes.drop = slots.unfoundRowHashes();
  return finish('changes', quiet, await d.links.get(touchedKeys), hashes);

  function finish(
    reads: SidesRead['reads'],
    quiet: SidesRead['quiet'],
    links: ReadonlyMap<string, Link>,
    changes: RowHashChanges | undefined,
  ): SidesRead {
    const source: SideRecord[] = [];
    const worksheet: SideRecord[] = [];
    let sourceMax: number | undefined;
    let rowMax: number | undefined;
    for (const r of sourceFull.values()) {
      const at = timeOf(r);
      if (at !== undefined) sourceMax = Math.max(sourceMax ?? at, at);
      source.push(d.record(r.key, r.values, 'source', at));
    }
    for (const row of rowsFull.values()) {
      const at = row.updatedAt?.getTime();
      if (at !== undefined) rowMax = Math.max(rowMax ?? at, at);
      worksheet.push(d.record(row.id, row.values, 'worksheet', at));
    }
    const before = reads === 'whole' ? undefined : d.cursors;
    // The next run reads from the millisecond after the latest time read, or from the
    // start of these reads minus the margin (whole seconds), whichever is earlier: a record
    // written after the reads started has a later time than either, so rounding that
    // bound up to a whole second (a wall-clock column, the platform's filter) skips nothing.
    const reached = (max: number | undefined, saved: number | undefined, bound: number) =>
      Math.min(max === undefined ? (saved ?? bound) : max + 1, bound);
    const next: SidesRead['next'] = { worksheet: reached(rowMax, before?.worksheet, cap.worksheet) };
    if (d.updatedAtColumn !== undefined) next.source = reached(sourceMax, before?.source, cap.source);
    const out: SidesRead = {
      reads,
      source,
      worksheet,
      links,
      quiet,
      readWhole: { source: sourceFull.size, worksheet: rowsFull.size },
      next,
    };
    if (hashColumns !== undefined) {
      // A record read whole after the scan is compared as read then: its hash is stored.
      const set = changes?.set ?? new Map<string, string>();
      for (const r of sourceFull.values()) if (r.hash !== undefined) set.set(r.key, r.hash);
      out.rowHashes = changes === undefined ? { all: set } : { set, drop: changes.drop };
    }
    return out;
  }
}
