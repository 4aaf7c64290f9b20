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

/** Sums up `plan`, made from `worksheetRows` rows of the worksheet. */
export function summarizePlan(plan: TwoWayPlan, worksheetRows: number): TwoWayPlanSummary {
  const worksheet = {
    create: plan.createInWorksheet.length,
    update: plan.writes.filter((w) => w.toWorksheet.length > 0).length,
    delete: plan.deleteInWorksheet.length,
  };
  const reads = 1 + Math.max(1, Math.ceil(worksheetRows / PAGE));
  const batchCreates = Math.ceil(worksheet.create / BATCH);
  const batchDeletes = Math.ceil(worksheet.delete / BATCH);
  return {
    worksheet,
    source: {
      create: plan.createInSource.length,
      update: plan.writes.filter((w) => Object.keys(w.toSource).length > 0).length,
      delete: plan.deleteInSource.length,
    },
    conflicts: plan.raiseConflicts.length,
    heldDeletes: plan.holdDeletes.length,
    kept: plan.kept.length,
    apiCalls: {
      total: reads + batchCreates + worksheet.update + batchDeletes,
      reads,
      batchCreates,
      singleUpdates: worksheet.update,
      batchDeletes,
    },
  };
}
