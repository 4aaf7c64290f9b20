/**
 * What `plan` shows of a two-way run before anything is written: the records matched,
 * found on one side only or sharing a key, the writes on each side, and the platform
 * requests they take (the table's statements cost no API call).
 */
import type { TwoWayPlan } from './two-way-plan-types.ts';

/** Rows per worksheet list page, batch create and batch delete (worksheet-side.ts, the reader). */
const PAGE = 1000;
const BATCH = 100;

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
    reads: number;
    batchCreates: number;
    singleUpdates: number;
    batchDeletes: number;
  };
}

/**
 * Sums up `plan`, made from `worksheetRows` rows of the worksheet; `sourceWorksheetRows`
 * when the other side is a worksheet too, whose reads and writes are requests as well.
 */
export function summarizePlan(
  plan: TwoWayPlan,
  worksheetRows: number,
  sourceWorksheetRows?: number,
): TwoWayPlanSummary {
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
  // A source worksheet: its structure and pages, and its writes, batched the same way.
  const other = sourceWorksheetRows === undefined ? undefined : source;
  const reads =
    1 +
    Math.max(1, Math.ceil(worksheetRows / PAGE)) +
    (sourceWorksheetRows === undefined ? 0 : 1 + Math.max(1, Math.ceil(sourceWorksheetRows / PAGE)));
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
      total: reads + batchCreates + singleUpdates + batchDeletes,
      reads,
      batchCreates,
      singleUpdates,
      batchDeletes,
    },
  };
}
