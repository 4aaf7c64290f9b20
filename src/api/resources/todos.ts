import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, QueryParams, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** Workflow to-do instances (spec §4 "Workflow to-do"). Payloads are not shown in the spec. */
export interface TodosResource {
  /** `GET /v3/app/workflow/instance/list`: to-dos of the user. */
  list(query?: QueryParams, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app/workflow/instance/{instance_id}`. */
  get(instanceId: string, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflow/instance/batch`: approves several to-dos. */
  approve(body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflow/instance/{instance_id}/revoke`. */
  revoke(instanceId: string, body?: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflow/instance/{instance_id}/return`: sends the to-do back. */
  return(instanceId: string, body?: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflow/instance/{instance_id}/terminate`. */
  terminate(instanceId: string, body?: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflow/instance/{instance_id}/urge`. */
  urge(instanceId: string, body?: JsonObject, options?: RequestOptions): Promise<unknown>;
}

type InstanceAction = 'revoke' | 'return' | 'terminate' | 'urge';

export function createTodosResource(call: CallFn): TodosResource {
  const instance = (where: string, instanceId: string) =>
    `/v3/app/workflow/instance/${pathSegment(`todos.${where}`, 'instanceId', instanceId)}`;
  const act = (
    action: InstanceAction,
    instanceId: string,
    body: JsonObject | undefined,
    options?: RequestOptions,
  ) => call(buildOperation('POST', `${instance(action, instanceId)}/${action}`, true, { body }, options));
  return {
    list: async (query, options) =>
      call(buildOperation('GET', '/v3/app/workflow/instance/list', false, { query }, options)),
    get: async (instanceId, options) =>
      call(buildOperation('GET', instance('get', instanceId), false, {}, options)),
    approve: async (body, options) =>
      call(buildOperation('POST', '/v3/app/workflow/instance/batch', true, { body }, options)),
    revoke: async (instanceId, body, options) => act('revoke', instanceId, body, options),
    return: async (instanceId, body, options) => act('return', instanceId, body, options),
    terminate: async (instanceId, body, options) => act('terminate', instanceId, body, options),
    urge: async (instanceId, body, options) => act('urge', instanceId, body, options),
  };
}
