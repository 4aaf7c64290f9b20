/**
 * Wire types of API v3 shared by the client, the emulator and the sync engine.
 * Precise where the spec or the platform notes give the shape, `unknown` where not.
 */
import type { FilterOperator } from './filter-operators.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Every response is wrapped in this envelope (platform-shapes §2 [C]). The export also
 * spells the code and text `code`/`msg` and `errorCode`/`errorMsg`, and the region
 * helper answers `{data, state: 1}`.
 */
export interface Envelope<T = unknown> {
  success?: boolean;
  error_code?: number;
  error_msg?: string;
  code?: number;
  msg?: string;
  errorCode?: number;
  errorMsg?: string;
  state?: number;
  data?: T;
}

export interface UserRef {
  accountId: string;
  fullname: string;
}

/** An option of a select field, as the worksheet structure returns it. */
export interface FieldOption {
  key: string;
  value: string;
  index?: number;
  /** Deleted options stay in the structure; text-to-key mapping skips them. */
  isDeleted?: boolean;
  color?: string;
}

/** `relation` of a Relation field (platform-shapes §4 [C]). */
export interface FieldRelation {
  showFields: string[];
  bidirectional?: boolean;
}

/** A field of `GET /v3/app/worksheets/{id}` → `fields[]` (platform-shapes §4). */
export interface WorksheetField {
  id: string;
  name: string;
  alias?: string;
  /**
   * The type name ("Text", "SingleSelect"). The parser turns integer codes and code
   * strings into names; a name rowbridge does not know is kept as sent.
   */
  type: string;
  required?: boolean;
  isUnique?: boolean;
  isTitle?: boolean;
  isReadOnly?: boolean;
  isHidden?: boolean;
  options?: FieldOption[];
  subType?: number;
  precision?: number;
  /** Rating maximum. */
  max?: number;
  /** For relation and subtable fields: the related worksheet id. */
  dataSource?: string;
  /** For relation fields: the reverse field in the related worksheet (may be ""). */
  sourceField?: string;
  relation?: FieldRelation;
  desc?: string;
  remark?: string;
}

/** A view of a worksheet structure. `type` is a string on the wire and often absent. */
export interface WorksheetView {
  id: string;
  name: string;
  type?: string;
}

/**
 * A worksheet structure as the sync uses it. `id` is read from the answer's
 * `worksheetId` (the public platform's key) or `id` (the seed spec's).
 */
export interface WorksheetStructure {
  id: string;
  name: string;
  alias?: string;
  appId?: string;
  desc?: string;
  remark?: string;
  fields: WorksheetField[];
  views?: WorksheetView[];
}

/** Field definition of create-worksheet / update-structure (spec §2). */
export interface FieldDefinition {
  name: string;
  alias?: string;
  type: string;
  required?: boolean;
  isTitle?: boolean;
  isUnique?: boolean;
  options?: Array<{ value: string; index: number; key?: string }>;
  config?: Record<string, unknown>;
  dataSource?: string;
}

export interface CreateWorksheetInput {
  name: string;
  alias?: string;
  sectionId?: string;
  createDefaultView?: boolean;
  fields: FieldDefinition[];
}

/** A field value as written: `{id: <field id or alias>, value, type?}` (platform notes §2). */
export interface FieldValue {
  id: string;
  value: unknown;
  /** "0" replace / "1" append for attachments; "2" lets select fields create options. */
  type?: string;
}

/** A row in the spec's shape. */
export interface WireRowFieldsShape {
  id: string;
  fields: Array<{ id: string; value: unknown; type?: string; controlName?: string; alias?: string }>;
  [system: `_${string}`]: unknown;
}

/** A row in the flat shape: keyed by alias (or field id with useFieldIdAsKey). */
export type WireRowFlatShape = Record<string, unknown> & { rowid?: string; id?: string };

export type WireRow = WireRowFieldsShape | WireRowFlatShape;

export interface FilterCondition {
  type: 'condition';
  field: string;
  operator: FilterOperator;
  value?: unknown;
}

export interface FilterGroup {
  type: 'group';
  logic: 'AND' | 'OR';
  children: Array<FilterCondition | FilterGroup>;
}

export type Filter = FilterGroup | FilterCondition;

export interface Sort {
  field: string;
  isAsc: boolean;
}

/** Body of `POST .../rows/list` (platform notes §3). */
export interface ListRowsBody {
  /** Required, at most 1000. */
  pageSize: number;
  /** Required, starts at 1. */
  pageIndex: number;
  filter?: Filter;
  sorts?: Sort[];
  fields?: string[];
  search?: string;
  viewId?: string;
  useFieldIdAsKey?: boolean;
  includeTotalCount?: boolean;
  includeSystemFields?: boolean;
  responseFormat?: 'json' | 'md';
  tableView?: boolean;
}

export interface ListRowsData {
  rows: WireRow[];
  total?: number;
  pageIndex?: number;
  pageSize?: number;
}

export interface WriteOptions {
  /** Defaults to true on the platform; bulk jobs normally send false. */
  triggerWorkflow?: boolean;
}

export interface BatchUpdateResult {
  successfulRowIds: string[];
  failedRowIds: string[];
}

/** Normalised worksheet row, whatever shape the server answered in (platform notes §5). */
export interface NormalisedRow {
  id: string;
  /** Field values keyed by field id AND by alias when the structure tells both. */
  values: Record<string, unknown>;
  createdAt?: Date;
  updatedAt?: Date;
  createdBy?: { accountId: string; fullname?: string };
  updatedBy?: { accountId: string; fullname?: string };
  owner?: { accountId: string; fullname?: string };
  /** Other system fields (`_processStatus`, ...) as received. */
  system: Record<string, unknown>;
}
