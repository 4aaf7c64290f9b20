import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** Roles and role members (spec §4 "Role"). Payloads are not shown in the spec. */
export interface RolesResource {
  /** `GET /v3/app/roles`. */
  list(options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/roles`. */
  create(body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app/roles/{role_id}`. */
  get(roleId: string, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/roles/{role_id}`. */
  delete(roleId: string, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/roles/{role_id}/members`. */
  addMembers(roleId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/roles/{role_id}/members` (the members to remove go in the body). */
  removeMembers(roleId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/roles/users/{user_id}`: removes the user from every role of the app. */
  removeUserFromAll(userId: string, options?: RequestOptions): Promise<unknown>;
}

export function createRolesResource(call: CallFn): RolesResource {
  const role = (where: string, roleId: string) =>
    `/v3/app/roles/${pathSegment(`roles.${where}`, 'roleId', roleId)}`;
  return {
    list: async (options) => call(buildOperation('GET', '/v3/app/roles', false, {}, options)),
    create: async (body, options) => call(buildOperation('POST', '/v3/app/roles', true, { body }, options)),
    get: async (roleId, options) => call(buildOperation('GET', role('get', roleId), false, {}, options)),
    delete: async (roleId, options) =>
      call(buildOperation('DELETE', role('delete', roleId), true, {}, options)),
    addMembers: async (roleId, body, options) =>
      call(buildOperation('POST', `${role('addMembers', roleId)}/members`, true, { body }, options)),
    removeMembers: async (roleId, body, options) =>
      call(buildOperation('DELETE', `${role('removeMembers', roleId)}/members`, true, { body }, options)),
    removeUserFromAll: async (userId, options) => {
      const path = `/v3/app/roles/users/${pathSegment('roles.removeUserFromAll', 'userId', userId)}`;
      return call(buildOperation('DELETE', path, true, {}, options));
    },
  };
}
