import { parsePivot } from '../answers/parse-pivot.ts';
import type { PivotBody, PivotResult } from '../answers/parse-pivot.ts';
import { parseRow, parseRowList } from '../answers/parse-row-list.ts';
import { parseBatchCreated, parseBatchUpdated, parseRowId } from '../answers/parse-write-results.ts';
import type { CallFn } from '../create-api-client.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { BatchUpdateResult, ListRowsBody, ListRowsData, WireRow } from '../types.ts';
import { answerRef, buildOperation } from './build-operation.ts';
import type { JsonObject, QueryParams, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';
import type { AnswerRef } from '../answers/answer-shape-error.ts';
import type {
  BatchCreateBody,
  BatchCreateResult,
  BatchDeleteBody,
  BatchUpdateBody,
  DeleteRowBody,
  GetRowQuery,
  RelationsQuery,
  RowIdResult,
  RowWriteBody,
} from './rows-types.ts';

/** Largest `pageSize` of a row list (platform notes §3 [C]). */
export const MAX_ROWS_PAGE_SIZE = 1000;

/**
 * The thirteen row endpoints (spec §4 "Row"). Writes always send `triggerWorkflow`,
 * because leaving it out means true on the platform (platform notes §2 [C]): single-row
 * writes default to true like the platform, batch writes to false, since a bulk job
 * would otherwise start one workflow run per row. Answers are parsed in every form the
 * export shows (src/api/answers/, platform-shapes §5-§7, §10).
 */
export interface RowsResource {
  /**
   * `POST /v3/app/worksheets/{worksheet_id}/rows/list`. Checks pageSize (1..1000) and pageIndex (>= 1)
   * first. Sends `useFieldIdAsKey: true` unless the body says otherwise: rows come back keyed by field id.
   */
  list(worksheetId: string, body: ListRowsBody, options?: RequestOptions): Promise<ListRowsData>;
  /** `GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}`. */
  get(worksheetId: string, rowId: string, query?: GetRowQuery, options?: RequestOptions): Promise<WireRow>;
  /** `POST /v3/app/worksheets/{worksheet_id}/rows`: `id` is undefined when the answer names none. */
  create(worksheetId: string, body: RowWriteBody, options?: RequestOptions): Promise<RowIdResult>;
  /** `PATCH /v3/app/worksheets/{worksheet_id}/rows/{row_id}`: only the fields sent change. Resolves to the row's id. */
  update(
    worksheetId: string,
    rowId: string,
    body: RowWriteBody,
    options?: RequestOptions,
  ): Promise<{ id: string }>;
  /** `DELETE /v3/app/worksheets/{worksheet_id}/rows/{row_id}` (soft unless `permanent`). */
  delete(worksheetId: string, rowId: string, body?: DeleteRowBody, options?: RequestOptions): Promise<void>;
  /**
   * `POST /v3/app/worksheets/{worksheet_id}/rows/batch`: the new ids in input order.
   * Rejects with a BatchCountMismatchError (category `ambiguous`) when the answer holds
   * another number of ids than rows were sent.
   */
  batchCreate(
    worksheetId: string,
    body: BatchCreateBody,
    options?: RequestOptions,
  ): Promise<BatchCreateResult>;
  /** `PATCH /v3/app/worksheets/{worksheet_id}/rows/batch`: the same `fields` on every row; which rows failed. */
  batchUpdate(
    worksheetId: string,
    body: BatchUpdateBody,
    options?: RequestOptions,
  ): Promise<BatchUpdateResult>;
  /** `DELETE /v3/app/worksheets/{worksheet_id}/rows/batch`. */
  batchDelete(worksheetId: string, body: BatchDeleteBody, options?: RequestOptions): Promise<void>;
  /** `GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}/relations/{field}`: a page of linked rows. */
  relations(
    worksheetId: string,
    rowId: string,
    field: string,
    query?: RelationsQuery,
    options?: RequestOptions,
  ): Promise<ListRowsData>;
  /** `POST /v3/app/worksheets/{worksheet_id}/rows/pivot` (a read). */
  pivot(worksheetId: string, body: PivotBody, options?: RequestOptions): Promise<PivotResult>;
  /** `POST /v3/app/worksheets/{worksheet_id}/rows/{row_id}/share-link` (a read). */
  shareLink(
    worksheetId: string,
    rowId: string,
    body?: JsonObject,
    options?: RequestOptions,
  ): Promise<unknown>;
  /** `GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}/logs`. */
  logs(worksheetId: string, rowId: string, query?: QueryParams, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}/discussions`. */
  discussions(
    worksheetId: string,
    rowId: string,
    query?: QueryParams,
    options?: RequestOptions,
  ): Promise<unknown>;
}

function checkPaging(worksheetId: string, body: ListRowsBody): void {
  const where = `rows.list (worksheet ${worksheetId})`;
  const { pageSize, pageIndex } = body as Partial<ListRowsBody>;
  if (
    typeof pageSize !== 'number' ||
    !Number.isInteger(pageSize) ||
    pageSize < 1 ||
    pageSize > MAX_ROWS_PAGE_SIZE
  ) {
    throw new ConfigError(
      `${where}: pageSize must be a whole number from 1 to ${MAX_ROWS_PAGE_SIZE}, got ${String(pageSize)}`,
    );
  }
  if (typeof pageIndex !== 'number' || !Number.isInteger(pageIndex) || pageIndex < 1) {
    throw new ConfigError(
      `${where}: pageIndex must be a whole number of at least 1 (pages start at 1), got ${String(pageIndex)}`,
    );
  }
}

/** An empty batch is a caller bug (nothing to do); the platform's answer to one is not documented. */
function checkList(where: string, name: string, value: unknown, nonEmpty: boolean): void {
  if (!Array.isArray(value)) throw new ConfigError(`${where}: ${name} must be an array, got ${typeof value}`);
  if (nonEmpty && value.length === 0) throw new ConfigError(`${where}: ${name} must not be empty`);
}

async function created(
  answer: Promise<unknown>,
  count: number,
  ref: AnswerRef,
): Promise<{ rowIds: string[] }> {
  return { rowIds: parseBatchCreated(await answer, count, ref) };
}

export function createRowsResource(call: CallFn): RowsResource {
  const base = (where: string, worksheetId: string) =>
    `/v3/app/worksheets/${pathSegment(where, 'worksheetId', worksheetId)}/rows`;
  const rowPath = (where: string, worksheetId: string, rowId: string) =>
    `${base(where, worksheetId)}/${pathSegment(where, 'rowId', rowId)}`;

  return {
    async list(worksheetId, body, options) {
      const path = `${base('rows.list', worksheetId)}/list`;
      checkPaging(worksheetId, body);
      // Without it, the key of a field whose alias is empty (aliases are optional) is
      // undocumented (platform-shapes §5 [U]); ids are always there, and the normaliser
      // puts each value under the field's alias too.
      const sent = { ...body, useFieldIdAsKey: body.useFieldIdAsKey ?? true };
      const op = buildOperation('POST', path, false, { body: sent }, options);
      return parseRowList(await call(op), answerRef('rows.list', op));
    },
    async get(worksheetId, rowId, query, options) {
      const op = buildOperation('GET', rowPath('rows.get', worksheetId, rowId), false, { query }, options);
      return parseRow(await call(op), answerRef('rows.get', op));
    },
    async create(worksheetId, body, options) {
      const path = base('rows.create', worksheetId);
      checkList('rows.create', 'fields', body.fields, false);
      const sent = { ...body, triggerWorkflow: body.triggerWorkflow ?? true };
      const id = parseRowId(await call(buildOperation('POST', path, true, { body: sent }, options)));
      return id === undefined ? {} : { id };
    },
    async update(worksheetId, rowId, body, options) {
      const path = rowPath('rows.update', worksheetId, rowId);
      checkList('rows.update', 'fields', body.fields, false);
      const sent = { ...body, triggerWorkflow: body.triggerWorkflow ?? true };
      // The export's PATCH example carries no data [C]; the id sent is the row's id.
      return {
        id: parseRowId(await call(buildOperation('PATCH', path, true, { body: sent }, options))) ?? rowId,
      };
    },
    async delete(worksheetId, rowId, body = {}, options) {
      const path = rowPath('rows.delete', worksheetId, rowId);
      const sent = { ...body, triggerWorkflow: body.triggerWorkflow ?? true };
      // `data` is `{}` or absent [C]: nothing to read.
      await call(buildOperation('DELETE', path, true, { body: sent }, options));
    },
    // Not async: nothing here holds the rows (`body`) while the request waits; the
    // operation carries them as bytes (../json-body.ts).
    batchCreate(worksheetId, body, options) {
      try {
        const path = `${base('rows.batchCreate', worksheetId)}/batch`;
        checkList('rows.batchCreate', 'rows', body.rows, true);
        const sent = { ...body, triggerWorkflow: body.triggerWorkflow ?? false };
        const op = buildOperation('POST', path, true, { body: sent }, options);
        return created(call(op), body.rows.length, answerRef('rows.batchCreate', op));
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
    async batchUpdate(worksheetId, body, options) {
      const path = `${base('rows.batchUpdate', worksheetId)}/batch`;
      checkList('rows.batchUpdate', 'rowIds', body.rowIds, true);
      checkList('rows.batchUpdate', 'fields', body.fields, false);
      const sent = { ...body, triggerWorkflow: body.triggerWorkflow ?? false };
      const op = buildOperation('PATCH', path, true, { body: sent }, options);
      return parseBatchUpdated(await call(op), body.rowIds, answerRef('rows.batchUpdate', op));
    },
    async batchDelete(worksheetId, body, options) {
      const path = `${base('rows.batchDelete', worksheetId)}/batch`;
      checkList('rows.batchDelete', 'rowIds', body.rowIds, true);
      const sent = { ...body, triggerWorkflow: body.triggerWorkflow ?? false };
      await call(buildOperation('DELETE', path, true, { body: sent }, options));
    },
    async relations(worksheetId, rowId, field, query, options) {
      const path = `${rowPath('rows.relations', worksheetId, rowId)}/relations/${pathSegment('rows.relations', 'field', field)}`;
      const op = buildOperation('GET', path, false, { query }, options);
      return parseRowList(await call(op), answerRef('rows.relations', op));
    },
    async pivot(worksheetId, body, options) {
      const op = buildOperation('POST', `${base('rows.pivot', worksheetId)}/pivot`, false, { body }, options);
      return parsePivot(await call(op), answerRef('rows.pivot', op));
    },
    async shareLink(worksheetId, rowId, body, options) {
      const path = `${rowPath('rows.shareLink', worksheetId, rowId)}/share-link`;
      return call(buildOperation('POST', path, false, { body }, options));
    },
    async logs(worksheetId, rowId, query, options) {
      return call(
        buildOperation('GET', `${rowPath('rows.logs', worksheetId, rowId)}/logs`, false, { query }, options),
      );
    },
    async discussions(worksheetId, rowId, query, options) {
      const path = `${rowPath('rows.discussions', worksheetId, rowId)}/discussions`;
      return call(buildOperation('GET', path, false, { query }, options));
    },
  };
}
