/**
 * Request and response shapes of the row endpoints (spec §4 "Row", platform notes §2).
 */
import type { FieldValue } from '../types.ts';

/** Query of `GET .../rows/{row_id}`. */
export type GetRowQuery = {
  /** Adds `_createdAt`, `_owner`... to the row. */
  includeSystemFields?: boolean;
  responseFormat?: 'json' | 'md';
};

/** Query of the paged row sub-resources. */
export type PageQuery = {
  pageSize?: number;
  /** Starts at 1. */
  pageIndex?: number;
};

/** Query of related rows: the flag is `isReturnSystemFields` here, not `includeSystemFields` [C]. */
export type RelationsQuery = PageQuery & {
  /** Adds `_createAt`, `_updatedAt`, `_owner` to each row. */
  isReturnSystemFields?: boolean;
};

/** Body of create row and update row. */
export interface RowWriteBody {
  fields: FieldValue[];
  /**
   * Whether the write starts the worksheet's workflows. The platform defaults to true;
   * rowbridge always sends the value, true unless the caller says otherwise.
   */
  triggerWorkflow?: boolean;
}

/**
 * What create row answers: `{id}`. The id is absent when the answer names none (the
 * export's example sends `{id: ""}` [C]).
 */
export interface RowIdResult {
  id?: string;
}

/** Body of delete row. */
export interface DeleteRowBody {
  /** @defaultValue true (sent explicitly) */
  triggerWorkflow?: boolean;
  /** Skips the recycle bin. The platform defaults to false (a soft delete). */
  permanent?: boolean;
}

/** Body of batch create. */
export interface BatchCreateBody {
  rows: Array<{ fields: FieldValue[] }>;
  /** @defaultValue false (sent explicitly; bulk jobs must not start a workflow per row) */
  triggerWorkflow?: boolean;
}

/** `data` of batch create: the new ids, assumed in input order (platform notes §2 [C]). */
export interface BatchCreateResult {
  rowIds: string[];
}

/** Body of batch update: ONE set of `fields` written to ALL `rowIds` (platform notes §2 [C]). */
export interface BatchUpdateBody {
  rowIds: string[];
  fields: FieldValue[];
  /** @defaultValue false (sent explicitly; bulk jobs must not start a workflow per row) */
  triggerWorkflow?: boolean;
}

/** Body of batch delete. */
export interface BatchDeleteBody {
  rowIds: string[];
  /** Skips the recycle bin. The platform defaults to false. */
  permanent?: boolean;
  /** @defaultValue false (sent explicitly; bulk jobs must not start a workflow per row) */
  triggerWorkflow?: boolean;
}
