/**
 * Spec §4 "Workflow". Payloads the spec does not show: create `{name, worksheetId?,
 * triggerType?}` → `{id}`; nodes `{nodes: [{name, type, prevId?, config?}]}` →
 * `[{id, name, type}]`; validate → `{isValid, errors}`; publish → `{processId}` or
 * 10001 listing what is invalid; trigger a process with any JSON body → `{instanceId}`,
 * a pending to-do for the approvers of its approval node. Extra: GET /v3/app/workflows.
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { notFound, paramError } from '../emulator-error.ts';
import { asArray, asObject, asString, bodyObject, optionalString } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';
import type { AppRecord, EmulatorState, WorkflowRecord } from '../state/records.ts';

const NODE_TYPES = [
  'start',
  'approval',
  'fill',
  'notice',
  'add-row',
  'update-row',
  'delete-row',
  'webhook',
  'condition',
  'delay',
  'code',
  'end',
] as const;

/** What stops a workflow from being published. */
export function workflowErrors(state: EmulatorState, wf: WorkflowRecord): string[] {
  const errors: string[] = [];
  const starts = wf.nodes.filter((n) => n.type === 'start');
  if (starts.length !== 1) errors.push(`a workflow needs exactly one start node, it has ${starts.length}`);
  if (wf.nodes.length < 2) errors.push('a workflow needs at least one node after the start node');
  for (const node of wf.nodes) {
    if (node.prevId !== '' && !wf.nodes.some((n) => n.id === node.prevId))
      errors.push(`node "${node.name}" follows node ${node.prevId}, which does not exist`);
    if (node.type === 'approval') {
      const approvers = node.config['approvers'];
      if (!Array.isArray(approvers) || approvers.length === 0)
        errors.push(`approval node "${node.name}" has no approvers (config.approvers)`);
      else
        for (const a of approvers)
          if (typeof a !== 'string' || !state.users.has(a))
            errors.push(`approval node "${node.name}": approver ${String(a)} is not a member`);
    }
  }
  return errors;
}

function findProcess(app: AppRecord, id: string) {
  const process = app.processes.get(id);
  if (process === undefined) throw notFound(`process ${id} does not exist`);
  return process;
}

export function createWorkflowRoutes(deps: EmulatorDeps): Route[] {
  const workflow = (ctx: AppRouteContext): WorkflowRecord => {
    const id = ctx.params['workflow_id'] ?? '';
    const wf = ctx.app.workflows.get(id);
    if (wf === undefined) throw notFound(`workflow ${id} does not exist`);
    return wf;
  };
  const processView = (ctx: AppRouteContext, id: string) => ({ ...findProcess(ctx.app, id) });
  return [
    {
      method: 'GET',
      path: '/app/workflow/processes',
      scope: 'app',
      handler: (ctx) => [...ctx.app.processes.keys()].map((id) => processView(ctx, id)),
    },
    {
      method: 'GET',
      path: '/app/workflow/processes/{process_id}',
      scope: 'app',
      handler: (ctx) => processView(ctx, ctx.params['process_id'] ?? ''),
    },
    {
      method: 'POST',
      path: '/app/workflow/hooks/{process_id}',
      scope: 'app',
      handler: (ctx) => {
        const process = findProcess(ctx.app, ctx.params['process_id'] ?? '');
        if (!process.enabled) throw notFound(`process ${process.id} is disabled`);
        const wf = ctx.app.workflows.get(process.workflowId);
        const approval = wf?.nodes.find((n) => n.type === 'approval');
        const approvers = Array.isArray(approval?.config['approvers'])
          ? (approval.config['approvers'] as string[])
          : [ctx.app.owner.accountId];
        const id = deps.ids.objectId();
        ctx.app.instances.set(id, {
          id,
          processId: process.id,
          title: `${process.name}: ${new Date(deps.options.now()).toISOString().slice(0, 10)}`,
          status: 'pending',
          initiatedBy: ctx.principal.user,
          assignees: approvers,
          payload: ctx.body ?? {},
          opinions: [],
          urgeCount: 0,
          createdAt: isoNow(deps),
        });
        return { instanceId: id };
      },
    },
    {
      method: 'GET',
      path: '/app/workflows',
      scope: 'app',
      handler: (ctx) => [...ctx.app.workflows.values()],
    },
    {
      method: 'POST',
      path: '/app/workflows',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const worksheetId = optionalString(body['worksheetId'], 'worksheetId');
        if (worksheetId !== '' && !ctx.app.worksheetIds.includes(worksheetId))
          throw paramError(`worksheetId "${worksheetId}" is not a worksheet of the application`);
        const id = deps.ids.objectId();
        ctx.app.workflows.set(id, {
          id,
          name: asString(body['name'], 'name'),
          worksheetId,
          triggerType: optionalString(body['triggerType'], 'triggerType', 'webhook'),
          nodes: [],
          published: false,
          processId: undefined,
          createdAt: isoNow(deps),
        });
        return { id };
      },
    },
    { method: 'GET', path: '/app/workflows/{workflow_id}', scope: 'app', handler: (ctx) => workflow(ctx) },
    {
      method: 'DELETE',
      path: '/app/workflows/{workflow_id}',
      scope: 'app',
      handler: (ctx) => {
        const wf = workflow(ctx);
        ctx.app.workflows.delete(wf.id);
        if (wf.processId !== undefined) ctx.app.processes.delete(wf.processId);
        return {};
      },
    },
    {
      method: 'POST',
      path: '/app/workflows/{workflow_id}/nodes/batch',
      scope: 'app',
      handler: (ctx) => {
        const wf = workflow(ctx);
        const nodes = asArray(bodyObject(ctx.body)['nodes'], 'nodes').map((raw, i) => {
          const input = asObject(raw, `nodes[${i}]`);
          const type = asString(input['type'], `nodes[${i}].type`);
          if (!(NODE_TYPES as readonly string[]).includes(type))
            throw paramError(`nodes[${i}].type "${type}" is not one of ${NODE_TYPES.join(', ')}`);
          const config = input['config'] === undefined ? {} : asObject(input['config'], `nodes[${i}].config`);
          return {
            id: deps.ids.objectId(),
            name: asString(input['name'], `nodes[${i}].name`),
            type,
            prevId: optionalString(input['prevId'], `nodes[${i}].prevId`),
            config,
          };
        });
        wf.nodes.push(...nodes);
        return nodes.map((n) => ({ id: n.id, name: n.name, type: n.type }));
      },
    },
    {
      method: 'DELETE',
      path: '/app/workflows/{workflow_id}/nodes/{node_id}',
      scope: 'app',
      handler: (ctx) => {
        const wf = workflow(ctx);
        const nodeId = ctx.params['node_id'] ?? '';
        if (!wf.nodes.some((n) => n.id === nodeId)) throw notFound(`workflow ${wf.id} has no node ${nodeId}`);
        wf.nodes = wf.nodes.filter((n) => n.id !== nodeId);
        return {};
      },
    },
    {
      method: 'POST',
      path: '/app/workflows/{workflow_id}/validate',
      scope: 'app',
      write: false,
      handler: (ctx) => {
        const errors = workflowErrors(deps.state, workflow(ctx));
        return { isValid: errors.length === 0, errors };
      },
    },
    {
      method: 'POST',
      path: '/app/workflows/{workflow_id}/publish',
      scope: 'app',
      handler: (ctx) => {
        const wf = workflow(ctx);
        const errors = workflowErrors(deps.state, wf);
        if (errors.length > 0)
          throw paramError(`workflow "${wf.name}" cannot be published: ${errors.join('; ')}`);
        if (wf.processId === undefined) {
          const processId = deps.ids.objectId();
          ctx.app.processes.set(processId, {
            id: processId,
            name: wf.name,
            workflowId: wf.id,
            enabled: true,
            createdAt: isoNow(deps),
          });
          wf.processId = processId;
        }
        wf.published = true;
        return { processId: wf.processId, published: true };
      },
    },
  ];
}
