/**
 * `data` of the organisation lookups (platform-shapes §9, `users-lookup.json`,
 * `departments-lookup.json`, `regions.json`). The users example writes `id`/`name`
 * where the schema has `accountId`/`fullname` [C]: both are read.
 */
import { AnswerShapeError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, firstId, readId, readLooseBoolean } from './read-loose.ts';

/** A department as the lookups return it. `path` lists its ancestors, `/`-joined. */
export interface LookupDepartment {
  id: string;
  name: string;
  path?: string;
  pathNodes?: Array<{ id: string; name: string }>;
}

/** A member found by `GET /v3/users/lookup`. `email` and `mobile` come masked [C]. */
export interface LookupUser {
  accountId: string;
  fullname: string;
  email?: string;
  mobile?: string;
  departments: LookupDepartment[];
}

/** A region of `GET /v3/regions`: `id` is the administrative code ("310000"). */
export interface Region {
  id: string;
  name: string;
  path: string;
  /** Read as "has no sub-regions" (the example's use), though described the other way [U]. */
  last?: boolean;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function listUnder(data: unknown, key: string, ref: AnswerRef): unknown[] {
  // The seed spec's form (and the emulator's before platform-shapes): a bare list [U].
  if (Array.isArray(data)) return data;
  const record = asRecord(data);
  const list = record?.[key];
  if (!Array.isArray(list))
    throw new AnswerShapeError(ref, `expected a "${key}" list; ${describeKeys(data)}`);
  return list;
}

function readDepartment(raw: unknown, where: string, ref: AnswerRef): LookupDepartment {
  const department = asRecord(raw);
  const found = department === undefined ? undefined : firstId(department, ['id', 'departmentId']);
  if (department === undefined || found === undefined) {
    throw new AnswerShapeError(ref, `${where} has no "id"; ${describeKeys(raw)}`);
  }
  const result: LookupDepartment = {
    id: found.id,
    name: text(department.name) ?? text(department.departmentName) ?? '',
  };
  const path = text(department.path);
  if (path !== undefined) result.path = path;
  if (Array.isArray(department.pathNodes)) {
    result.pathNodes = department.pathNodes.flatMap((node) => {
      const record = asRecord(node);
      const id = record === undefined ? undefined : readId(record.id);
      return record === undefined || id === undefined ? [] : [{ id, name: text(record.name) ?? '' }];
    });
  }
  return result;
}

/** `{users: [...]}` → members; an entry without `accountId` or `id` is an {@link AnswerShapeError}. */
export function parseUsersLookup(data: unknown, ref: AnswerRef): LookupUser[] {
  return listUnder(data, 'users', ref).map((raw, at) => {
    const user = asRecord(raw);
    const found = user === undefined ? undefined : firstId(user, ['accountId', 'id']);
    if (user === undefined || found === undefined) {
      throw new AnswerShapeError(ref, `users[${at}] has no "accountId" (or "id"); ${describeKeys(raw)}`);
    }
    const result: LookupUser = {
      accountId: found.id,
      fullname: text(user.fullname) ?? text(user.name) ?? '',
      departments: Array.isArray(user.departments)
        ? user.departments.map((d, i) => readDepartment(d, `users[${at}].departments[${i}]`, ref))
        : [],
    };
    const email = text(user.email);
    if (email !== undefined) result.email = email;
    const mobile = text(user.mobile);
    if (mobile !== undefined) result.mobile = mobile;
    return result;
  });
}

/** `{departments: [...]}` → departments. */
export function parseDepartmentsLookup(data: unknown, ref: AnswerRef): LookupDepartment[] {
  return listUnder(data, 'departments', ref).map((raw, at) => readDepartment(raw, `departments[${at}]`, ref));
}

/** `{regions: [...], currentRegion?}` → regions (`currentRegion` is only in the example [C] and is dropped). */
export function parseRegions(data: unknown, ref: AnswerRef): Region[] {
  return listUnder(data, 'regions', ref).map((raw, at) => {
    const region = asRecord(raw);
    // `code` is the seed spec's key for the same administrative code.
    const code = region?.id ?? region?.code;
    const id = readId(typeof code === 'number' ? String(code) : code);
    if (region === undefined || id === undefined) {
      throw new AnswerShapeError(ref, `regions[${at}] has no "id" (or "code"); ${describeKeys(raw)}`);
    }
    const result: Region = {
      id,
      name: text(region.name) ?? '',
      path: text(region.path) ?? text(region.name) ?? '',
    };
    const last = readLooseBoolean(region.last);
    if (last !== undefined) result.last = last;
    return result;
  });
}
