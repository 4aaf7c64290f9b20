/**
 * Row writes with the platform's semantics (platform notes §2): batch create is
 * all-or-nothing and answers ids in input order; batch update writes ONE field set to
 * all rowIds and reports the rows it could not update; deletes are soft (recycle bin)
 * unless `permanent`. Every change leaves an entry in the row's log.
 */
import type { BatchUpdateResult, UserRef } from '../wire-types.ts';
import type { EmulatorDeps } from '../deps.ts';
import { EmulatorError, notFound, paramError } from '../emulator-error.ts';
import { asArray, asObject, asString } from '../input.ts';
import type { StoredRow, WorksheetRecord } from '../state/records.ts';
import { uniqueFieldIds } from '../worksheets/worksheet-model.ts';
import {
  checkValues,
  commitPendingOptions,
  located,
  parseFieldValues,
  prepareValues,
} from './field-values.ts';
import { appendLog } from './row-log.ts';
import { insertRow, liveRow, purgeRow, replaceValues, softDelete } from './row-table.ts';
import type { WriteScope } from './value-codec.ts';

/** Batch update answer, with the reason of each failed row (an emulator extra). */
export interface BatchUpdateAnswer extends BatchUpdateResult {
  failures: Array<{ rowId: string; error_code: number; error_msg: string }>;
}

/** Who wrote a new row and who owns it. */
export interface RowAuthor {
  by: UserRef;
  owner: UserRef;
}

function scopeOf(deps: EmulatorDeps): WriteScope {
  return { deps, pendingOptions: new Map() };
}

function checkBatchSize(deps: EmulatorDeps, count: number, what: string): void {
  if (count === 0) throw paramError(`${what} must not be empty`);
  if (count > deps.options.maxBatchRows)
    throw paramError(`${what} holds ${count} rows; at most ${deps.options.maxBatchRows} per request`);
}

function newRow(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  values: Record<string, unknown>,
  author: RowAuthor,
  id: string | undefined,
): StoredRow {
  const now = deps.options.now();
  return {
    id: id ?? deps.ids.uuid(),
    autoId: ws.table.nextAutoId++,
    values,
    createdAt: now,
    updatedAt: now,
    createdBy: author.by,
    updatedBy: author.by,
    owner: author.owner,
    deleted: false,
    purged: false,
    logs: undefined,
    discussions: undefined,
    shareToken: undefined,
  };
}

/** Creates one row; `id` lets a seed file fix the row id. */
export function createRow(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rawFields: unknown,
  author: RowAuthor,
  id?: string,
): string {
  if (id !== undefined && ws.table.byId.has(id)) throw new EmulatorError(10006, `row ${id} already exists`);
  const scope = scopeOf(deps);
  const { values } = prepareValues(scope, ws, parseFieldValues(ws, rawFields, 'fields'), undefined);
  commitPendingOptions(scope, ws);
  const row = newRow(deps, ws, values, author, id);
  insertRow(ws.table, row, uniqueFieldIds(ws));
  return row.id;
}

/** All rows are checked before any is written: one bad row fails the batch, naming its index. */
export function createRows(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rawRows: unknown,
  author: RowAuthor,
): string[] {
  const rows = asArray(rawRows, 'rows');
  checkBatchSize(deps, rows.length, 'rows');
  const scope = scopeOf(deps);
  const batchKeys = new Map<string, Set<string>>();
  const prepared = rows.map((raw, i) =>
    located(`rows[${i}]`, () => {
      const parsed = parseFieldValues(ws, asObject(raw, `rows[${i}]`)['fields'], 'fields');
      return prepareValues(scope, ws, parsed, undefined, batchKeys).values;
    }),
  );
  commitPendingOptions(scope, ws);
  const unique = uniqueFieldIds(ws);
  return prepared.map((values) => {
    const row = newRow(deps, ws, values, author, undefined);
    insertRow(ws.table, row, unique);
    return row.id;
  });
}

function requireLive(ws: WorksheetRecord, rowId: string): StoredRow {
  const row = liveRow(ws.table, rowId);
  if (row === undefined)
    throw notFound(`row ${rowId} does not exist in worksheet "${ws.name}" or was deleted`);
  return row;
}

function applyUpdate(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  row: StoredRow,
  prepared: ReturnType<typeof prepareValues>,
  user: UserRef,
): void {
  if (prepared.changes.length === 0) return;
  const now = deps.options.now();
  appendLog(row, { action: 'update', at: now, by: user, changes: prepared.changes, values: undefined });
  replaceValues(ws.table, row, prepared.values, uniqueFieldIds(ws));
  row.updatedAt = now;
  row.updatedBy = user;
}

export function updateRow(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rowId: string,
  rawFields: unknown,
  user: UserRef,
): void {
  const row = requireLive(ws, rowId);
  const scope = scopeOf(deps);
  const prepared = prepareValues(scope, ws, parseFieldValues(ws, rawFields, 'fields'), row);
  commitPendingOptions(scope, ws);
  applyUpdate(deps, ws, row, prepared, user);
}

/**
 * A field set that is wrong in itself (unknown field, wrong value form) fails the whole
 * request; what depends on the row (gone, a unique value taken by another row, an
 * attachment append over the limit) fails only that row.
 */
export function updateRows(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rawIds: unknown,
  rawFields: unknown,
  user: UserRef,
): BatchUpdateAnswer {
  const rowIds = asArray(rawIds, 'rowIds').map((id, i) => asString(id, `rowIds[${i}]`));
  checkBatchSize(deps, rowIds.length, 'rowIds');
  const parsed = parseFieldValues(ws, rawFields, 'fields');
  const scope = scopeOf(deps);
  // Checking the values against an empty row first surfaces request-level errors.
  checkValues(scope, parsed);
  const answer: BatchUpdateAnswer = { successfulRowIds: [], failedRowIds: [], failures: [] };
  for (const rowId of rowIds) {
    try {
      const row = requireLive(ws, rowId);
      applyUpdate(deps, ws, row, prepareValues(scope, ws, parsed, row), user);
      answer.successfulRowIds.push(rowId);
    } catch (error) {
      if (!(error instanceof EmulatorError)) throw error;
      answer.failedRowIds.push(rowId);
      answer.failures.push({ rowId, error_code: error.errorCode, error_msg: error.message });
    }
  }
  commitPendingOptions(scope, ws);
  return answer;
}

export function deleteRow(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rowId: string,
  permanent: boolean,
  user: UserRef,
): void {
  const row = ws.table.byId.get(rowId);
  // A permanent delete may empty the recycle bin; a soft one needs a live row.
  if (row === undefined || (row.deleted && !permanent))
    throw notFound(`row ${rowId} does not exist in worksheet "${ws.name}" or was deleted`);
  const unique = uniqueFieldIds(ws);
  if (permanent) {
    purgeRow(ws.table, row, unique);
    return;
  }
  softDelete(ws.table, row, unique);
  appendLog(row, {
    action: 'delete',
    at: deps.options.now(),
    by: user,
    changes: undefined,
    values: undefined,
  });
}

/** Ids that do not exist are skipped: deleting is idempotent, so a retried batch succeeds. */
export function deleteRows(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rawIds: unknown,
  permanent: boolean,
  user: UserRef,
): void {
  const rowIds = asArray(rawIds, 'rowIds').map((id, i) => asString(id, `rowIds[${i}]`));
  checkBatchSize(deps, rowIds.length, 'rowIds');
  for (const rowId of rowIds) {
    const row = ws.table.byId.get(rowId);
    if (row !== undefined && (permanent || !row.deleted)) deleteRow(deps, ws, rowId, permanent, user);
  }
}
