/**
 * The emulator's in-memory records. One {@link EmulatorState} object holds everything
 * (no module-level state), so `reset()` simply builds a new one.
 */
import type { FieldTypeName } from '../field-kinds.ts';
import type { UserRef } from '../wire-types.ts';

export interface OrgRecord {
  id: string;
  name: string;
}

export interface UserRecord {
  accountId: string;
  fullname: string;
  email: string;
  /** '' when the member has none. */
  mobile: string;
  departmentIds: string[];
}

export interface DepartmentRecord {
  id: string;
  name: string;
  parentId: string | null;
}

export interface RegionRecord {
  code: string;
  name: string;
  parentCode: string | null;
}

export interface OptionRecord {
  key: string;
  value: string;
  index: number;
  isDeleted: boolean;
  color?: string;
}

export interface FieldRecord {
  id: string;
  name: string;
  /** '' when the field has no alias. */
  alias: string;
  type: FieldTypeName;
  required: boolean;
  isUnique: boolean;
  isTitle: boolean;
  isReadOnly: boolean;
  isHidden: boolean;
  options: OptionRecord[];
  /** Relation and SubTable fields: the related worksheet. */
  dataSource: string | undefined;
  precision: number | undefined;
  /**
   * Collaborator 0 single / 1 multiple; Relation 1 single / 2 multiple; Time 1 HH:mm /
   * 6 HH:mm:ss; Date and DateTime their precision (platform-shapes §4 [C]).
   */
  subType: number | undefined;
  /** Rating: the highest score, 0-10. */
  max: number | undefined;
  /** Relation: the reverse field in the target worksheet, '' when there is none. */
  sourceField: string;
  /** Relation: the target's fields shown in the cell, and whether the link is two-way. */
  relation: { showFields: string[]; bidirectional: boolean } | undefined;
  config: Record<string, unknown>;
}

/** One entry of a row's log: every change to a row leaves one. */
export interface RowLogEntry {
  action: 'create' | 'update' | 'delete';
  at: number;
  by: UserRef;
  /** Updates: field id → value before/after (canonical form). */
  changes: Array<{ fieldId: string; before: unknown; after: unknown }> | undefined;
  /**
   * Creates: the values written. It is the row's first values object itself, which
   * updates replace rather than mutate, so keeping it costs no copy.
   */
  values: Record<string, unknown> | undefined;
}

export interface DiscussionRecord {
  id: string;
  message: string;
  createdBy: UserRef;
  createdAt: number;
}

export interface StoredRow {
  id: string;
  /** 1-based creation ordinal: the `autoid` system field and the default order. */
  autoId: number;
  /** Field id → canonical value (see value-codec.ts). Replaced, never mutated, on update. */
  values: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  createdBy: UserRef;
  updatedBy: UserRef;
  owner: UserRef;
  /** Soft-deleted (recycle bin): invisible to reads, still present. */
  deleted: boolean;
  /** Permanently deleted: kept in `order` only until the next compaction. */
  purged: boolean;
  /** Undefined until the first change after creation (see rows/row-log.ts). */
  logs: RowLogEntry[] | undefined;
  discussions: DiscussionRecord[] | undefined;
  shareToken: string | undefined;
}

export interface RowTable {
  byId: Map<string, StoredRow>;
  /** Creation order; may hold purged rows until compaction. */
  order: StoredRow[];
  purgedInOrder: number;
  live: number;
  nextAutoId: number;
  /** Unique field id → value key → id of the live row holding it. */
  unique: Map<string, Map<string, string>>;
  /**
   * The matches of the last filtered or sorted list, so paging through a large table
   * filters and sorts it once, not once per page. Valid while `revision` is current.
   */
  queryCache: { key: string; revision: number; rows: StoredRow[] } | undefined;
}

export interface ViewRecord {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
}

export interface WorksheetRecord {
  id: string;
  appId: string;
  name: string;
  alias: string;
  remark: string;
  sectionId: string;
  fields: FieldRecord[];
  /** Field id and alias → field. */
  byKey: Map<string, FieldRecord>;
  views: ViewRecord[];
  charts: Map<string, Record<string, unknown> & { id: string }>;
  table: RowTable;
  createdAt: number;
}

export interface SectionRecord {
  id: string;
  name: string;
  parentId: string;
  items: Array<{ id: string; name: string; type: string; url?: string }>;
}

/** A generic named resource (chatbots, knowledge bases, custom pages...). */
export type ResourceRecord = Record<string, unknown> & { id: string; createdAt: string };

export interface KnowledgeBaseRecord {
  id: string;
  name: string;
  description: string;
  documents: Array<{ name: string; content: string }>;
  createdAt: string;
}

export interface WorkflowNode {
  id: string;
  name: string;
  type: string;
  prevId: string;
  config: Record<string, unknown>;
}

export interface WorkflowRecord {
  id: string;
  name: string;
  worksheetId: string;
  triggerType: string;
  nodes: WorkflowNode[];
  published: boolean;
  processId: string | undefined;
  createdAt: string;
}

export interface ProcessRecord {
  id: string;
  name: string;
  workflowId: string;
  enabled: boolean;
  createdAt: string;
}

export type InstanceStatus = 'pending' | 'approved' | 'rejected' | 'revoked' | 'returned' | 'terminated';

export interface InstanceRecord {
  id: string;
  processId: string;
  title: string;
  status: InstanceStatus;
  initiatedBy: UserRef;
  assignees: string[];
  payload: unknown;
  opinions: Array<{ by: UserRef; action: string; opinion: string; at: string }>;
  urgeCount: number;
  createdAt: string;
}

export interface RoleRecord {
  id: string;
  name: string;
  description: string;
  permissionWay: number;
  memberIds: Set<string>;
  departmentIds: Set<string>;
  createdAt: string;
}

export interface OptionSetRecord {
  id: string;
  name: string;
  options: OptionRecord[];
  isActive: boolean;
  createdAt: string;
}

export interface AppRecord {
  id: string;
  name: string;
  description: string;
  iconUrl: string;
  color: string;
  appKey: string;
  sign: string;
  owner: UserRef;
  createdAt: string;
  sections: SectionRecord[];
  worksheetIds: string[];
  customPages: Map<string, ResourceRecord>;
  workflows: Map<string, WorkflowRecord>;
  processes: Map<string, ProcessRecord>;
  instances: Map<string, InstanceRecord>;
  roles: Map<string, RoleRecord>;
  chatbots: Map<string, ResourceRecord>;
  knowledgeBases: Map<string, KnowledgeBaseRecord>;
  optionSets: Map<string, OptionSetRecord>;
}

export interface PersonalTokenRecord {
  /** Non-secret identifier, the credential id in the request log. */
  id: string;
  appIds: Set<string>;
  user: UserRef;
}

export interface OAuthClientRecord {
  clientId: string;
  clientSecret: string;
  appIds: Set<string>;
  user: UserRef;
}

export interface CredentialState {
  /** appKey → appId. */
  appKeys: Map<string, string>;
  personalTokens: Map<string, PersonalTokenRecord>;
  oauthClients: Map<string, OAuthClientRecord>;
  /** refresh token → clientId. */
  refreshTokens: Map<string, string>;
  /** access token → clientId and expiry (epoch ms). */
  accessTokens: Map<string, { clientId: string; expiresAt: number }>;
}

export interface EmulatorState {
  /** Counts write requests; cached query results of an older revision are stale. */
  revision: number;
  org: OrgRecord;
  users: Map<string, UserRecord>;
  departments: Map<string, DepartmentRecord>;
  regions: Map<string, RegionRecord>;
  apps: Map<string, AppRecord>;
  worksheets: Map<string, WorksheetRecord>;
  credentials: CredentialState;
}
