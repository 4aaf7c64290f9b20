/**
 * What `plan` shows of a two-way run before anything is written: the records matched,
 * found on one side only or sharing a key, the writes on each side, and the platform
 * requests they take (the table's statements cost no API call).
 */
import type { TwoWayField } from './two-way-fields.ts';
import type { TwoWayPlan } from './two-way-plan-types.ts';
import type { RelationKeyField } from './two-way-rows.ts';

/** Rows per worksheet list page, batch create and batch delete (worksheet-side.ts, the reader). */
const PAGE = 1000;
const BATCH = 100;
/** Keys per lookup of related rows by key when writing (create-reference-lookups.ts). */
const LOOKUP_CHUNK = 100;

/** The writes a two-way run would make, and their API cost. */
export interface TwoWayPlanSummary {
  worksheet: { create: number; update: number; delete: number };
  source: { create: number; update: number; delete: number };
  conflicts: number;
  heldDeletes: number;
  kept: number;
  /** Platform requests: reads (structure and list pages), batch creates, single updates, batch deletes. */
  apiCalls: {
    total: number;
    /** Every read, relation lookups included. */
    reads: number;
    /**
     * Of `reads`, lookups of related rows: their keys for the rows read (as the plan's own
     * read asked them), and the related rows of the keys the run would write (estimated:
     * a request per 100 distinct keys written, and the related worksheet's structure).
     */
    relationLookups: number;
    batchCreates: number;
    singleUpdates: number;
    batchDeletes: number;
  };
}

/** How the plan's reads went and what the job maps, for {@link summarizePlan}. */
export interface PlanReads {
  /** The worksheet's reads the plan made: list pages, and related-row lookups. */
  worksheet: { lists: number; lookups: number };
  /** Rows of the other side when it is a worksheet too, whose reads and writes are requests as well. */
  sourceWorksheetRows?: number | undefined;
  fields: readonly TwoWayField[];
  relations: readonly RelationKeyField[];
}

/** Sums up `plan` and its API cost: the reads as the plan made them, the writes as the run would. */
export function summarizePlan(plan: TwoWayPlan, reads: PlanReads): TwoWayPlanSummary {
  const worksheet = {
    create: plan.createInWorksheet.length,
    update: plan.writes.filter((w) => w.toWorksheet.length > 0).length,
    delete: plan.deleteInWorksheet.length,
  };
  const source = {
    create: plan.createInSource.length,
    update: plan.writes.filter((w) => Object.keys(w.toSource).length > 0).length,
    delete: plan.deleteInSource.length,
  };
  const sourceRows = reads.sourceWorksheetRows;
  // A source worksheet: its structure and pages, and its writes, batched the same way.
  const other = sourceRows === undefined ? undefined : source;
  const relationLookups = reads.worksheet.lookups + writeLookups(plan, reads);
  const total =
    1 +
    reads.worksheet.lists +
    relationLookups +
    (sourceRows === undefined ? 0 : 1 + Math.max(1, Math.ceil(sourceRows / PAGE)));
  const batchCreates = Math.ceil(worksheet.create / BATCH) + Math.ceil((other?.create ?? 0) / BATCH);
  const batchDeletes = Math.ceil(worksheet.delete / BATCH) + Math.ceil((other?.delete ?? 0) / BATCH);
  const singleUpdates = worksheet.update + (other?.update ?? 0);
  return {
    worksheet,
    source,
    conflicts: plan.raiseConflicts.length,
    heldDeletes: plan.holdDeletes.length,
    kept: plan.kept.length,
    apiCalls: {
      total: total + batchCreates + singleUpdates + batchDeletes,
      reads: total,
      relationLookups,
      batchCreates,
      singleUpdates,
      batchDeletes,
    },
  };
}

/**
 * The lookups of the related rows of the keys the run would write to the worksheet's
 * relations (by key; `rowid` needs none): per related worksheet its structure, and per
 * field a request per {@link LOOKUP_CHUNK} distinct keys, creates and updates apart.
 */
function writeLookups(plan: TwoWayPlan, reads: PlanReads): number {
  let n = 0;
  const worksheets = new Set<string>();
  for (const r of reads.relations) {
    if (r.keyField === 'rowid') continue;
    const f = reads.fields.find((x) => x.fieldId === r.field.id);
    if (f === undefined || f.column === undefined || f.direction === 'to-source') continue;
    const column = f.column;
    const created = keysIn(plan.createInWorksheet.map((c) => c.record.values[column]));
    const updated = keysIn(
      plan.writes.filter((w) => w.toWorksheet.includes(f.target)).map((w) => w.worksheetRecord[column]),
    );
    for (const k of created) updated.delete(k);
    const asked = Math.ceil(created.size / LOOKUP_CHUNK) + Math.ceil(updated.size / LOOKUP_CHUNK);
    if (asked > 0) worksheets.add(r.field.dataSource ?? '');
    n += asked;
  }
  return n + worksheets.size;
}

/** The distinct keys of relation cells as the table holds them (several joined by `,`). */
function keysIn(cells: readonly unknown[]): Set<string> {
  const keys = new Set<string>();
  for (const cell of cells) {
    const items = Array.isArray(cell) ? cell : cell === null || cell === undefined ? [] : [cell];
    for (const item of items)
      for (const k of String(item).split(',')) if (k.trim() !== '') keys.add(k.trim());
  }
  return keys;
}
