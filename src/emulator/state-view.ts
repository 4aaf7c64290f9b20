/**
 * Read access to the emulator's content for tests: what landed in a worksheet, without
 * going through HTTP (and without counting against limits or meeting faults).
 */
import type { UserRef, WorksheetStructure } from './wire-types.ts';
import type { EmulatorDeps } from './deps.ts';
import { plainText } from './rows/read-format.ts';
import { rowLog } from './rows/row-log.ts';
import type { StoredRow, UserRecord, WorksheetRecord } from './state/records.ts';
import { structureView } from './worksheets/structure-view.ts';

/** A row as the store holds it. */
export interface EmulatorRowView {
  id: string;
  /**
   * Values in canonical write form (numbers as numbers, option keys, account ids, row
   * ids, `YYYY-MM-DD` dates), keyed by field alias, or field id for fields without one.
   * Empty fields are absent.
   */
  values: Record<string, unknown>;
  /** The same values as plain text (option texts, member names), keyed the same way. */
  text: Record<string, string>;
  deleted: boolean;
  createdAt: string;
  updatedAt: string;
  createdBy: UserRef;
  updatedBy: UserRef;
  owner: UserRef;
  /** Number of log entries (one per change). */
  logCount: number;
}

export interface EmulatorStateView {
  apps(): Array<{ id: string; name: string; worksheetIds: string[] }>;
  /** A worksheet's structure by id (or alias, first match). */
  worksheet(idOrAlias: string): WorksheetStructure | undefined;
  /** Live rows in creation order; soft-deleted ones too with `includeDeleted`. */
  rows(worksheet: string, options?: { includeDeleted?: boolean }): EmulatorRowView[];
  row(worksheet: string, rowId: string): EmulatorRowView | undefined;
  /** Live rows, in O(1). */
  rowCount(worksheet: string): number;
  users(): UserRecord[];
}

export function createStateView(deps: EmulatorDeps): EmulatorStateView {
  const find = (ref: string): WorksheetRecord | undefined =>
    deps.state.worksheets.get(ref) ??
    [...deps.state.worksheets.values()].find((ws) => ws.alias !== '' && ws.alias === ref);
  const need = (ref: string): WorksheetRecord => {
    const ws = find(ref);
    if (ws === undefined) throw new Error(`emulator state: no worksheet ${ref}`);
    return ws;
  };
  const view = (ws: WorksheetRecord, row: StoredRow): EmulatorRowView => {
    const values: Record<string, unknown> = {};
    const text: Record<string, string> = {};
    for (const f of ws.fields) {
      const value = row.values[f.id];
      if (value === undefined) continue;
      const key = f.alias === '' ? f.id : f.alias;
      values[key] = value;
      text[key] = plainText(deps.state, f, row);
    }
    return {
      id: row.id,
      values,
      text,
      deleted: row.deleted,
      createdAt: new Date(row.createdAt).toISOString(),
      updatedAt: new Date(row.updatedAt).toISOString(),
      createdBy: row.createdBy,
      updatedBy: row.updatedBy,
      owner: row.owner,
      logCount: rowLog(row).length,
    };
  };
  return {
    apps: () =>
      [...deps.state.apps.values()].map((a) => ({
        id: a.id,
        name: a.name,
        worksheetIds: [...a.worksheetIds],
      })),
    worksheet: (ref) => {
      const ws = find(ref);
      return ws === undefined ? undefined : structureView(ws, deps.options.typeFormat);
    },
    rows: (ref, options = {}) => {
      const ws = need(ref);
      return ws.table.order
        .filter((r) => !r.purged && (options.includeDeleted === true || !r.deleted))
        .map((r) => view(ws, r));
    },
    row: (ref, rowId) => {
      const ws = need(ref);
      const row = ws.table.byId.get(rowId);
      return row === undefined ? undefined : view(ws, row);
    },
    rowCount: (ref) => need(ref).table.live,
    users: () => [...deps.state.users.values()].map((u) => ({ ...u, departmentIds: [...u.departmentIds] })),
  };
}
