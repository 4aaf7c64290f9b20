/**
 * Spec §4 "Organization and other" lookups: departments (`?keywords&parentId`), regions
 * (`?keywords&parentCode`) and members (`?keywords&departmentId`). Emulator extras add
 * and remove departments and members (POST /v3/departments, DELETE
 * /v3/departments/{department_id}, POST /v3/users, DELETE /v3/users/{user_id}); regions
 * are fixed geography.
 */
import type { EmulatorDeps } from '../deps.ts';
import { EmulatorError, notFound, paramError } from '../emulator-error.ts';
import { asString, bodyObject, optionalArray, optionalString } from '../input.ts';
import type { Route } from '../router.ts';

/**
 * An email as the platform's user lookup shows it (platform-shapes §9 [C]): a local part
 * longer than 4 loses its last 4 characters to `****`; one of 2 to 4 keeps its first
 * letter plus `***`; the domain stays.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return email;
  const local = email.slice(0, at);
  const masked = local.length > 4 ? `${local.slice(0, -4)}****` : `${local.slice(0, 1)}***`;
  return `${masked}${email.slice(at)}`;
}

/** A mobile number as the user lookup shows it: the first 3 and last 4 digits, `*` between (platform-shapes §9 [C]). */
export function maskMobile(mobile: string): string {
  if (mobile.length <= 7) return mobile;
  return `${mobile.slice(0, 3)}${'*'.repeat(mobile.length - 7)}${mobile.slice(-4)}`;
}

export function createLookupRoutes(deps: EmulatorDeps): Route[] {
  const state = deps.state;
  const platform = () => deps.options.dialect === 'platform';
  /** The platform's lookups take an exact `name`, required (platform-shapes §9 [C]). */
  const exactName = (ctx: { query: URLSearchParams }): string => {
    const name = ctx.query.get('name');
    if (name === null || name.trim() === '')
      throw paramError('name is required: the lookup matches it exactly');
    return name;
  };
  /** A department with its ancestors, top first, the department itself left out (platform-shapes §9 [C]). */
  const departmentRef = (d: { id: string; name: string; parentId: string | null }) => {
    const pathNodes: Array<{ id: string; name: string }> = [];
    for (
      let at = d.parentId === null ? undefined : state.departments.get(d.parentId);
      at !== undefined && pathNodes.length < 64;
      at = at.parentId === null ? undefined : state.departments.get(at.parentId)
    )
      pathNodes.unshift({ id: at.id, name: at.name });
    return { id: d.id, name: d.name, path: pathNodes.map((n) => n.name).join('/'), pathNodes };
  };
  const matches = (text: string, keywords: string | null) =>
    keywords === null || text.toLowerCase().includes(keywords.toLowerCase());
  return [
    {
      method: 'GET',
      path: '/departments/lookup',
      scope: 'account',
      handler: (ctx) => {
        if (platform()) {
          const name = exactName(ctx);
          return {
            departments: [...state.departments.values()].filter((d) => d.name === name).map(departmentRef),
          };
        }
        const parentId = ctx.query.get('parentId');
        return [...state.departments.values()]
          .filter(
            (d) =>
              matches(d.name, ctx.query.get('keywords')) && (parentId === null || d.parentId === parentId),
          )
          .map((d) => ({ departmentId: d.id, departmentName: d.name, parentId: d.parentId ?? '' }));
      },
    },
    {
      // The platform's path and shape (platform-shapes §9 [C]): children of `id` (the top
      // level without one) or a fuzzy `search`; `last` read as "has no sub-regions" [U].
      method: 'GET',
      path: '/regions',
      scope: 'account',
      handler: (ctx) => {
        const parent = ctx.query.get('id') ?? '';
        const search = ctx.query.get('search');
        const all = [...state.regions.values()];
        const pathOf = (code: string | null): string => {
          const names: string[] = [];
          for (
            let r = code === null ? undefined : state.regions.get(code);
            r !== undefined;
            r = r.parentCode === null ? undefined : state.regions.get(r.parentCode)
          )
            names.unshift(r.name);
          return names.join('/');
        };
        const chosen =
          search !== null && search !== ''
            ? all.filter((r) => r.name.toLowerCase().includes(search.toLowerCase()))
            : all.filter((r) => (r.parentCode ?? '') === parent);
        return {
          regions: chosen.map((r) => ({
            id: r.code,
            name: r.name,
            path: pathOf(r.code),
            last: !all.some((c) => c.parentCode === r.code),
          })),
          currentRegion: { id: parent, path: pathOf(parent === '' ? null : parent) },
        };
      },
    },
    {
      method: 'GET',
      path: '/regions/lookup',
      scope: 'account',
      handler: (ctx) => {
        const parentCode = ctx.query.get('parentCode') ?? ctx.query.get('parentId');
        return [...state.regions.values()]
          .filter(
            (r) =>
              matches(r.name, ctx.query.get('keywords')) &&
              (parentCode === null
                ? r.parentCode === null || ctx.query.get('keywords') !== null
                : r.parentCode === parentCode),
          )
          .map((r) => ({ code: r.code, name: r.name, parentCode: r.parentCode ?? '' }));
      },
    },
    {
      method: 'GET',
      path: '/users/lookup',
      scope: 'account',
      handler: (ctx) => {
        if (platform()) {
          const name = exactName(ctx);
          return {
            users: [...state.users.values()]
              .filter((u) => u.fullname === name)
              .map((u) => ({
                accountId: u.accountId,
                fullname: u.fullname,
                mobile: maskMobile(u.mobile),
                email: maskEmail(u.email),
                departments: u.departmentIds
                  .map((id) => state.departments.get(id))
                  .filter((d) => d !== undefined)
                  .map(departmentRef),
              })),
          };
        }
        const departmentId = ctx.query.get('departmentId');
        return [...state.users.values()]
          .filter(
            (u) =>
              (matches(u.fullname, ctx.query.get('keywords')) ||
                matches(u.email, ctx.query.get('keywords'))) &&
              (departmentId === null || u.departmentIds.includes(departmentId)),
          )
          .map((u) => ({
            accountId: u.accountId,
            fullname: u.fullname,
            email: u.email,
            departmentIds: [...u.departmentIds],
          }));
      },
    },
    {
      method: 'POST',
      path: '/departments',
      scope: 'account',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const parentId = optionalString(body['parentId'], 'parentId');
        if (parentId !== '' && !state.departments.has(parentId))
          throw paramError(`parentId "${parentId}" is not a department`);
        const id = deps.ids.objectId();
        state.departments.set(id, {
          id,
          name: asString(body['name'], 'name'),
          parentId: parentId === '' ? null : parentId,
        });
        return { departmentId: id };
      },
    },
    {
      method: 'DELETE',
      path: '/departments/{department_id}',
      scope: 'account',
      handler: (ctx) => {
        const id = ctx.params['department_id'] ?? '';
        if (!state.departments.has(id)) throw notFound(`department ${id} does not exist`);
        if ([...state.departments.values()].some((d) => d.parentId === id))
          throw new EmulatorError(430021, `department ${id} still has sub-departments`);
        state.departments.delete(id);
        for (const u of state.users.values()) u.departmentIds = u.departmentIds.filter((d) => d !== id);
        return {};
      },
    },
    {
      method: 'POST',
      path: '/users',
      scope: 'account',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const email = asString(body['email'], 'email');
        if ([...state.users.values()].some((u) => u.email === email))
          throw new EmulatorError(10006, `a member with email ${email} already exists`);
        const departmentIds = optionalArray(body['departmentIds'], 'departmentIds').map((d, i) =>
          asString(d, `departmentIds[${i}]`),
        );
        for (const d of departmentIds)
          if (!state.departments.has(d)) throw paramError(`departmentIds: "${d}" is not a department`);
        const accountId = deps.ids.uuid();
        state.users.set(accountId, {
          accountId,
          fullname: asString(body['fullname'], 'fullname'),
          email,
          mobile: optionalString(body['mobile'], 'mobile'),
          departmentIds,
        });
        return { accountId };
      },
    },
    {
      method: 'DELETE',
      path: '/users/{user_id}',
      scope: 'account',
      handler: (ctx) => {
        const id = ctx.params['user_id'] ?? '';
        if (!state.users.delete(id)) throw notFound(`member ${id} does not exist`);
        return {};
      },
    },
  ];
}
