/**
 * Spec §4 "Role". Create `{name, description?, permissionWay?}` → `{id}` (a duplicate
 * name is 10006); members `{userIds?, departmentIds?}` to add (POST) or remove (DELETE);
 * a role reads `{id, name, description, permissionWay, members: [{accountId, fullname}],
 * departments: [{departmentId, departmentName}]}`.
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { EmulatorError, notFound } from '../emulator-error.ts';
import { asString, bodyObject, optionalArray, optionalInteger, optionalString } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';
import type { RoleRecord } from '../state/records.ts';

export function createRoleRoutes(deps: EmulatorDeps): Route[] {
  const state = deps.state;
  const role = (ctx: AppRouteContext): RoleRecord => {
    const id = ctx.params['role_id'] ?? '';
    const found = ctx.app.roles.get(id);
    if (found === undefined) throw notFound(`role ${id} does not exist`);
    return found;
  };
  const view = (r: RoleRecord) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    permissionWay: r.permissionWay,
    members: [...r.memberIds].map((accountId) => ({
      accountId,
      fullname: state.users.get(accountId)?.fullname ?? '',
    })),
    departments: [...r.departmentIds].map((departmentId) => ({
      departmentId,
      departmentName: state.departments.get(departmentId)?.name ?? '',
    })),
    createdAt: r.createdAt,
  });
  const members = (ctx: AppRouteContext) => {
    const body = bodyObject(ctx.body);
    const userIds = optionalArray(body['userIds'], 'userIds').map((id, i) => asString(id, `userIds[${i}]`));
    const departmentIds = optionalArray(body['departmentIds'], 'departmentIds').map((id, i) =>
      asString(id, `departmentIds[${i}]`),
    );
    for (const id of userIds)
      if (!state.users.has(id))
        throw new EmulatorError(10002, `userIds: ${id} is not a member of the organisation`);
    for (const id of departmentIds)
      if (!state.departments.has(id))
        throw new EmulatorError(10002, `departmentIds: ${id} is not a department`);
    return { userIds, departmentIds };
  };
  return [
    {
      method: 'GET',
      path: '/app/roles',
      scope: 'app',
      handler: (ctx) => [...ctx.app.roles.values()].map(view),
    },
    {
      method: 'POST',
      path: '/app/roles',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const name = asString(body['name'], 'name');
        if ([...ctx.app.roles.values()].some((r) => r.name === name))
          throw new EmulatorError(10006, `a role named "${name}" already exists`);
        const id = deps.ids.objectId();
        ctx.app.roles.set(id, {
          id,
          name,
          description: optionalString(body['description'], 'description'),
          permissionWay: optionalInteger(body['permissionWay'], 'permissionWay') ?? 80,
          memberIds: new Set(),
          departmentIds: new Set(),
          createdAt: isoNow(deps),
        });
        return { id };
      },
    },
    { method: 'GET', path: '/app/roles/{role_id}', scope: 'app', handler: (ctx) => view(role(ctx)) },
    {
      method: 'DELETE',
      path: '/app/roles/{role_id}',
      scope: 'app',
      handler: (ctx) => {
        ctx.app.roles.delete(role(ctx).id);
        return {};
      },
    },
    {
      method: 'POST',
      path: '/app/roles/{role_id}/members',
      scope: 'app',
      handler: (ctx) => {
        const r = role(ctx);
        const { userIds, departmentIds } = members(ctx);
        for (const id of userIds) r.memberIds.add(id);
        for (const id of departmentIds) r.departmentIds.add(id);
        return view(r);
      },
    },
    {
      method: 'DELETE',
      path: '/app/roles/{role_id}/members',
      scope: 'app',
      handler: (ctx) => {
        const r = role(ctx);
        const { userIds, departmentIds } = members(ctx);
        for (const id of userIds) r.memberIds.delete(id);
        for (const id of departmentIds) r.departmentIds.delete(id);
        return view(r);
      },
    },
    {
      method: 'DELETE',
      path: '/app/roles/users/{user_id}',
      scope: 'app',
      handler: (ctx) => {
        const userId = ctx.params['user_id'] ?? '';
        const removedFrom = [...ctx.app.roles.values()]
          .filter((r) => r.memberIds.delete(userId))
          .map((r) => r.id);
        return { removedFrom };
      },
    },
  ];
}
