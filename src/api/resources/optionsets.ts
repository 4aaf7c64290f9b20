import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** Option sets (spec §4 "Organization and other"). Payloads are not shown in the spec. */
export interface OptionsetsResource {
  /** `GET /v3/app/optionsets`. */
  list(options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/optionsets`. */
  create(body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `PUT /v3/app/optionsets/{optionset_id}`: replaces the whole option set. */
  update(optionsetId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/optionsets/{optionset_id}`: deactivates the option set. */
  delete(optionsetId: string, options?: RequestOptions): Promise<unknown>;
}

export function createOptionsetsResource(call: CallFn): OptionsetsResource {
  const one = (where: string, optionsetId: string) =>
    `/v3/app/optionsets/${pathSegment(`optionsets.${where}`, 'optionsetId', optionsetId)}`;
  return {
    list: async (options) => call(buildOperation('GET', '/v3/app/optionsets', false, {}, options)),
    create: async (body, options) =>
      call(buildOperation('POST', '/v3/app/optionsets', true, { body }, options)),
    update: async (optionsetId, body, options) =>
      call(buildOperation('PUT', one('update', optionsetId), true, { body }, options)),
    delete: async (optionsetId, options) =>
      call(buildOperation('DELETE', one('delete', optionsetId), true, {}, options)),
  };
}
