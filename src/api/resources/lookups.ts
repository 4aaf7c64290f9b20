import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { QueryParams, RequestOptions } from './build-operation.ts';

/**
 * Query of the organization lookups. With a personal or OAuth token the platform may
 * need `orgId` to know which organization is meant (platform notes §6 [C]/[L]).
 */
export type LookupQuery = QueryParams & { orgId?: string };

/** Organization lookups (spec §4 "Organization and other"). Result shapes are not shown. */
export interface LookupsResource {
  /** `GET /v3/departments/lookup`. */
  departments(query?: LookupQuery, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/regions/lookup`. */
  regions(query?: LookupQuery, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/users/lookup`: organization members (their accountIds fill member fields). */
  users(query?: LookupQuery, options?: RequestOptions): Promise<unknown>;
}

export function createLookupsResource(call: CallFn): LookupsResource {
  return {
    departments: async (query, options) =>
      call(buildOperation('GET', '/v3/departments/lookup', false, { query }, options)),
    regions: async (query, options) =>
      call(buildOperation('GET', '/v3/regions/lookup', false, { query }, options)),
    users: async (query, options) =>
      call(buildOperation('GET', '/v3/users/lookup', false, { query }, options)),
  };
}
