/**
 * The few wire types the emulator speaks in, written here from the seed spec (api-v3.md
 * §2) rather than imported from the client: the emulator stands apart from the product
 * it tests (see field-kinds.ts).
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A member as rows and lookups show it. */
export interface UserRef {
  accountId: string;
  fullname: string;
}

export interface FieldOption {
  key: string;
  value: string;
  index?: number;
  isDeleted?: boolean;
  color?: string;
}

/** A field of a structure in the seed spec's form (the platform form adds keys, see structure-view.ts). */
export interface WorksheetField {
  id: string;
  name: string;
  alias?: string;
  type: string;
  required?: boolean;
  isUnique?: boolean;
  isTitle?: boolean;
  isReadOnly?: boolean;
  isHidden?: boolean;
  options?: FieldOption[];
  subType?: number;
  precision?: number;
  max?: number;
  dataSource?: string;
  relation?: { showFields: string[]; bidirectional: boolean };
}

export interface WorksheetStructure {
  id: string;
  name: string;
  alias?: string;
  appId?: string;
  fields: WorksheetField[];
  views?: Array<{ id: string; name: string; type?: string }>;
}

/** A field of create-worksheet and structure updates. */
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
  /** Collaborator 0 single / 1 multiple; Relation 1 single / 2 multiple; Time 1 HH:mm / 6 HH:mm:ss. */
  subType?: number;
  /** Rating: the highest score. */
  max?: number;
  /** Relation: the reverse field in the target worksheet. */
  sourceField?: string;
  relation?: { showFields?: string[]; bidirectional?: boolean };
}

export interface CreateWorksheetInput {
  name: string;
  alias?: string;
  sectionId?: string;
  createDefaultView?: boolean;
  fields: FieldDefinition[];
}

export interface BatchUpdateResult {
  successfulRowIds: string[];
  failedRowIds: string[];
}
