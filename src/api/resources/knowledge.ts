import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';

/** Vector knowledge bases (spec §4). Both endpoints are reads sent as POST; payloads are not shown. */
export interface KnowledgeResource {
  /** `POST /v3/app/knowledge/list`. */
  list(body?: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/knowledge/search`. */
  search(body: JsonObject, options?: RequestOptions): Promise<unknown>;
}

export function createKnowledgeResource(call: CallFn): KnowledgeResource {
  return {
    list: async (body, options) =>
      call(buildOperation('POST', '/v3/app/knowledge/list', false, { body }, options)),
    search: async (body, options) =>
      call(buildOperation('POST', '/v3/app/knowledge/search', false, { body }, options)),
  };
}
