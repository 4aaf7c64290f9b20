/**
 * Errors of the row helpers. They extend the client's error module so that
 * `classifyError` already knows what to do with them: a bad filter is a `config`
 * error (the job spec or the caller is wrong, nothing was sent, the run stops), a row
 * or page the helpers cannot read is a response error.
 */
import { ConfigError, RowbridgeError } from '../../ground/errors.ts';
import type { RowbridgeErrorCode } from '../../ground/errors.ts';
import type { FilterOperator } from '../filter-operators.ts';

/** What a {@link FilterError} points at, so a caller can show or match on it. */
export interface FilterErrorDetails {
  /** Where in the filter the problem is, for example `filter.children[1]`. */
  path: string;
  /** The field as the filter names it (id, alias or system name). */
  field?: string;
  /** The field's type name, or its raw type when rowbridge does not know it. */
  fieldType?: string;
  operator?: string;
  /** Operators the field supports. */
  allowed?: readonly FilterOperator[];
}

/**
 * A filter the platform would misread. The server silently ignores conditions with an
 * unknown operator and returns the whole table (platform notes §3 [C]), so every such
 * filter is refused before it is sent.
 */
export class FilterError extends ConfigError {
  override name = 'FilterError';
  readonly path: string;
  readonly field: string | undefined;
  readonly fieldType: string | undefined;
  readonly operator: string | undefined;
  readonly allowed: readonly FilterOperator[] | undefined;

  constructor(message: string, details: FilterErrorDetails) {
    super(message);
    this.path = details.path;
    this.field = details.field;
    this.fieldType = details.fieldType;
    this.operator = details.operator;
    this.allowed = details.allowed;
  }
}

/** A row (or one of its cells) the normaliser cannot read. */
export class RowShapeError extends RowbridgeError {
  override name = 'RowShapeError';
  override readonly code: RowbridgeErrorCode = 'ROWBRIDGE_RESPONSE_ERROR';
  /** The row's id when it has one. */
  readonly rowId: string | undefined;
  /** The key of the offending cell or system field. */
  readonly field: string | undefined;

  constructor(message: string, details: { rowId?: string; field?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.rowId = details.rowId;
    this.field = details.field;
  }
}

/** A list answer that paging cannot go on from (no rows array, a server ignoring pageIndex). */
export class RowPagingError extends RowbridgeError {
  override name = 'RowPagingError';
  override readonly code: RowbridgeErrorCode = 'ROWBRIDGE_RESPONSE_ERROR';
  readonly pageIndex: number;

  constructor(message: string, pageIndex: number) {
    super(message);
    this.pageIndex = pageIndex;
  }
}
