import { parseAppInfo } from '../answers/parse-app-info.ts';
import type { AppInfo } from '../answers/parse-app-info.ts';
import type { CallFn } from '../create-api-client.ts';
import { answerRef, buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';

/**
 * Application management (spec §4). `/v3/app` is the application the credential
 * belongs to (the app key's, or the one named by the `HAP-Appid` header), so these
 * paths carry no app id. Payloads are not shown in the spec.
 */
export interface AppsResource {
  /** `GET /v3/apps/list`. */
  list(options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/apps`. */
  create(input: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app`: the application with its sections, items and child sections (see listAppWorksheets). */
  get(options?: RequestOptions): Promise<AppInfo>;
  /** `POST /v3/app/sections/batch`. */
  createSections(input: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/items/batch`. */
  createItems(input: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app`. */
  edit(input: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app`. */
  delete(options?: RequestOptions): Promise<unknown>;
}

export function createAppsResource(call: CallFn): AppsResource {
  return {
    list: async (options) => call(buildOperation('GET', '/v3/apps/list', false, {}, options)),
    create: async (input, options) =>
      call(buildOperation('POST', '/v3/apps', true, { body: input }, options)),
    async get(options) {
      const op = buildOperation('GET', '/v3/app', false, {}, options);
      return parseAppInfo(await call(op), answerRef('apps.get', op));
    },
    createSections: async (input, options) =>
      call(buildOperation('POST', '/v3/app/sections/batch', true, { body: input }, options)),
    createItems: async (input, options) =>
      call(buildOperation('POST', '/v3/app/items/batch', true, { body: input }, options)),
    edit: async (input, options) => call(buildOperation('POST', '/v3/app', true, { body: input }, options)),
    delete: async (options) => call(buildOperation('DELETE', '/v3/app', true, {}, options)),
  };
}
