import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** Workflows, their nodes and trigger processes (spec §4 "Workflow"). Payloads are not shown in the spec. */
export interface WorkflowsResource {
  /** `GET /v3/app/workflow/processes`. */
  listProcesses(options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app/workflow/processes/{process_id}`. */
  getProcess(processId: string, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflow/hooks/{process_id}`: starts a run, so it is a write. */
  triggerProcess(processId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflows`. */
  create(body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflows/{workflow_id}/nodes/batch`. */
  createNodes(workflowId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/workflows/{workflow_id}/nodes/{node_id}`. */
  deleteNode(workflowId: string, nodeId: string, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/workflows/{workflow_id}`. */
  delete(workflowId: string, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app/workflows/{workflow_id}`: the workflow structure. */
  get(workflowId: string, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflows/{workflow_id}/validate` (a read: it checks, it changes nothing). */
  validate(workflowId: string, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/workflows/{workflow_id}/publish`. */
  publish(workflowId: string, options?: RequestOptions): Promise<unknown>;
}

export function createWorkflowsResource(call: CallFn): WorkflowsResource {
  const processPath = (where: string, processId: string) =>
    pathSegment(`workflows.${where}`, 'processId', processId);
  const workflow = (where: string, workflowId: string) =>
    `/v3/app/workflows/${pathSegment(`workflows.${where}`, 'workflowId', workflowId)}`;
  return {
    listProcesses: async (options) =>
      call(buildOperation('GET', '/v3/app/workflow/processes', false, {}, options)),
    getProcess: async (processId, options) =>
      call(
        buildOperation(
          'GET',
          `/v3/app/workflow/processes/${processPath('getProcess', processId)}`,
          false,
          {},
          options,
        ),
      ),
    triggerProcess: async (processId, body, options) =>
      call(
        buildOperation(
          'POST',
          `/v3/app/workflow/hooks/${processPath('triggerProcess', processId)}`,
          true,
          { body },
          options,
        ),
      ),
    create: async (body, options) =>
      call(buildOperation('POST', '/v3/app/workflows', true, { body }, options)),
    createNodes: async (workflowId, body, options) =>
      call(
        buildOperation('POST', `${workflow('createNodes', workflowId)}/nodes/batch`, true, { body }, options),
      ),
    deleteNode: async (workflowId, nodeId, options) => {
      const path = `${workflow('deleteNode', workflowId)}/nodes/${pathSegment('workflows.deleteNode', 'nodeId', nodeId)}`;
      return call(buildOperation('DELETE', path, true, {}, options));
    },
    delete: async (workflowId, options) =>
      call(buildOperation('DELETE', workflow('delete', workflowId), true, {}, options)),
    get: async (workflowId, options) =>
      call(buildOperation('GET', workflow('get', workflowId), false, {}, options)),
    validate: async (workflowId, options) =>
      call(buildOperation('POST', `${workflow('validate', workflowId)}/validate`, false, {}, options)),
    publish: async (workflowId, options) =>
      call(buildOperation('POST', `${workflow('publish', workflowId)}/publish`, true, {}, options)),
  };
}
