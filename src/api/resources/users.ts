import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { RequestOptions } from './build-operation.ts';

/** The user endpoints (spec §4 "User"). Their `data` shapes are not shown in the spec. */
export interface UsersResource {
  /** `GET /v3/orgs/list`: organizations of the user. */
  listOrgs(options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/users/me`: the current user. */
  me(options?: RequestOptions): Promise<unknown>;
}

export function createUsersResource(call: CallFn): UsersResource {
  return {
    listOrgs: async (options) => call(buildOperation('GET', '/v3/orgs/list', false, {}, options)),
    me: async (options) => call(buildOperation('GET', '/v3/users/me', false, {}, options)),
  };
}
