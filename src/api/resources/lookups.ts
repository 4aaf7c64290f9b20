import { parseDepartmentsLookup, parseRegions, parseUsersLookup } from '../answers/parse-lookups.ts';
import type { LookupDepartment, LookupUser, Region } from '../answers/parse-lookups.ts';
import type { CallFn } from '../create-api-client.ts';
import { ConfigError } from '../../ground/errors.ts';
import { answerRef, buildOperation } from './build-operation.ts';
import type { QueryParams, RequestOptions } from './build-operation.ts';

/**
 * Query of the member and department lookups: `name` is required and matched exactly
 * (platform-shapes §9 [C]). With a personal or OAuth token the platform may need `orgId`
 * to know which organisation is meant [L]; without one here, the client's configured
 * organisation id is sent.
 */
export type LookupQuery = QueryParams & { name: string; orgId?: string };

/** Query of `GET /v3/regions`: children of `id` (none: the top level), or a fuzzy `search`. */
export type RegionsQuery = QueryParams & { id?: string; search?: string; orgId?: string };

/** Organisation lookups (platform-shapes §9). */
export interface LookupsResource {
  /** `GET /v3/departments/lookup?name=`: departments with exactly that name. */
  departments(query: LookupQuery, options?: RequestOptions): Promise<LookupDepartment[]>;
  /** `GET /v3/regions?id=&search=` (not `/v3/regions/lookup` [C]). */
  regions(query?: RegionsQuery, options?: RequestOptions): Promise<Region[]>;
  /** `GET /v3/users/lookup?name=`: members with exactly that name (their accountIds fill member fields). */
  users(query: LookupQuery, options?: RequestOptions): Promise<LookupUser[]>;
}

function checkName(where: string, query: LookupQuery | undefined): void {
  const name: unknown = query?.name;
  if (typeof name !== 'string' || name.trim() === '') {
    const got = typeof name === 'string' ? JSON.stringify(name) : typeof name;
    throw new ConfigError(`${where}: name is required (the platform matches it exactly), got ${got}`);
  }
}

/** @param orgId The organisation id sent when a query has none (settings: ROWBRIDGE_ORG_ID). */
export function createLookupsResource(call: CallFn, orgId?: string): LookupsResource {
  const withOrg = <Q extends QueryParams>(query: Q): Q =>
    orgId === undefined || query.orgId !== undefined ? query : { ...query, orgId };
  return {
    async departments(query, options) {
      checkName('lookups.departments', query);
      const op = buildOperation('GET', '/v3/departments/lookup', false, { query: withOrg(query) }, options);
      return parseDepartmentsLookup(await call(op), answerRef('lookups.departments', op));
    },
    async regions(query = {}, options) {
      const op = buildOperation('GET', '/v3/regions', false, { query: withOrg(query) }, options);
      return parseRegions(await call(op), answerRef('lookups.regions', op));
    },
    async users(query, options) {
      checkName('lookups.users', query);
      const op = buildOperation('GET', '/v3/users/lookup', false, { query: withOrg(query) }, options);
      return parseUsersLookup(await call(op), answerRef('lookups.users', op));
    },
  };
}
