/**
 * `POST .../rows/pivot` (platform-shapes §10, `rows-pivot.json` [C]): the body and the
 * answer. Cells are keyed by field id (or `record_count`); values are passed on as sent.
 */
import type { Filter, Sort } from '../types.ts';
import { AnswerShapeError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, readLooseInteger } from './read-loose.ts';

/** An aggregation; case-insensitive on the wire. COUNT needs `field: "record_count"`. */
export type PivotAggregation = 'COUNT' | 'DISTINCTCOUNT' | 'SUM' | 'MIN' | 'MAX' | 'AVG';

export interface PivotValue {
  field: string;
  aggregation: PivotAggregation;
  displayName?: string;
  includeEmpty?: boolean;
}

export interface PivotDimension {
  field: string;
  displayName?: string;
  /** Dates: 1 day, 2 week, 3 month; regions: 1 province, 2 city, 3 county. */
  granularity?: number;
  includeEmpty?: boolean;
}

/** Body of the pivot request; only `values` is required. */
export interface PivotBody {
  values: PivotValue[];
  rows?: PivotDimension[];
  columns?: PivotDimension[];
  filter?: Filter;
  sorts?: Sort[];
  viewId?: string;
  pageSize?: number;
  pageIndex?: number;
  includeSummary?: boolean;
}

/** One cell group of the answer. */
export interface PivotEntry {
  columns: Record<string, unknown>;
  rows: Record<string, unknown>;
  values: Record<string, unknown>;
}

export interface PivotResult {
  meta: Record<string, unknown>;
  pivot: PivotEntry[];
  summary: Record<string, unknown> | undefined;
  totalPages: number | undefined;
  currentPage: number | undefined;
}

/** Reads the pivot answer; throws {@link AnswerShapeError} when `pivot` is not a list. */
export function parsePivot(data: unknown, ref: AnswerRef): PivotResult {
  const record = asRecord(data);
  if (record === undefined || !Array.isArray(record.pivot)) {
    throw new AnswerShapeError(ref, `expected {meta, pivot: [...]}; ${describeKeys(data)}`);
  }
  return {
    meta: asRecord(record.meta) ?? {},
    pivot: record.pivot.map((raw) => {
      const entry = asRecord(raw) ?? {};
      return {
        columns: asRecord(entry.columns) ?? {},
        rows: asRecord(entry.rows) ?? {},
        values: asRecord(entry.values) ?? {},
      };
    }),
    summary: asRecord(record.summary),
    totalPages: readLooseInteger(record.totalPages),
    currentPage: readLooseInteger(record.currentPage),
  };
}
