/**
 * Spec §4 "Workflow to-do". The list shows the caller's pending to-dos (`?status=` picks
 * another status, `all` every one). Approve (batch) takes `{instanceIds, action?: pass |
 * overrule, opinion?}` → `{successfulIds, failedIds}`; revoke, return, terminate and urge
 * take `{opinion?}`. Only pending to-dos can be acted on: anything else is 430021.
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { EmulatorError, notFound, paramError } from '../emulator-error.ts';
import { asArray, asString, bodyObject, optionalString } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';
import type { InstanceRecord, InstanceStatus } from '../state/records.ts';

const ACTIONS = { revoke: 'revoked', return: 'returned', terminate: 'terminated' } as const;

export function createTodoRoutes(deps: EmulatorDeps): Route[] {
  const instance = (ctx: AppRouteContext, id: string): InstanceRecord => {
    const found = ctx.app.instances.get(id);
    if (found === undefined) throw notFound(`to-do ${id} does not exist`);
    return found;
  };
  const act = (
    ctx: AppRouteContext,
    found: InstanceRecord,
    action: string,
    next: InstanceStatus | undefined,
  ): void => {
    if (found.status !== 'pending')
      throw new EmulatorError(
        430021,
        `to-do ${found.id} is ${found.status}; only pending to-dos can be acted on`,
      );
    const opinion = optionalString(bodyObject(ctx.body)['opinion'], 'opinion');
    found.opinions.push({ by: ctx.principal.user, action, opinion, at: isoNow(deps) });
    if (next !== undefined) found.status = next;
  };
  const actionRoute = (name: keyof typeof ACTIONS | 'urge'): Route => ({
    method: 'POST',
    path: `/app/workflow/instance/{instance_id}/${name}`,
    scope: 'app',
    handler: (ctx) => {
      const found = instance(ctx, ctx.params['instance_id'] ?? '');
      act(ctx, found, name, name === 'urge' ? undefined : ACTIONS[name]);
      if (name === 'urge') found.urgeCount += 1;
      return { id: found.id, status: found.status, urgeCount: found.urgeCount };
    },
  });
  return [
    {
      method: 'GET',
      path: '/app/workflow/instance/list',
      scope: 'app',
      handler: (ctx) => {
        const status = ctx.query.get('status') ?? 'pending';
        const me = ctx.principal.user.accountId;
        return [...ctx.app.instances.values()]
          .filter(
            (i) =>
              (status === 'all' || i.status === status) &&
              (i.assignees.includes(me) || i.initiatedBy.accountId === me),
          )
          .map(({ id, processId, title, status: s, initiatedBy, createdAt }) => ({
            id,
            processId,
            title,
            status: s,
            initiatedBy,
            createdAt,
          }));
      },
    },
    {
      method: 'GET',
      path: '/app/workflow/instance/{instance_id}',
      scope: 'app',
      handler: (ctx) => instance(ctx, ctx.params['instance_id'] ?? ''),
    },
    {
      method: 'POST',
      path: '/app/workflow/instance/batch',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const action = optionalString(body['action'], 'action', 'pass');
        if (action !== 'pass' && action !== 'overrule')
          throw paramError(`action must be "pass" or "overrule", got "${action}"`);
        const ids = asArray(body['instanceIds'], 'instanceIds').map((id, i) =>
          asString(id, `instanceIds[${i}]`),
        );
        const answer = { successfulIds: [] as string[], failedIds: [] as string[] };
        for (const id of ids) {
          try {
            act(ctx, instance(ctx, id), action, action === 'pass' ? 'approved' : 'rejected');
            answer.successfulIds.push(id);
          } catch (error) {
            if (!(error instanceof EmulatorError)) throw error;
            answer.failedIds.push(id);
          }
        }
        return answer;
      },
    },
    actionRoute('revoke'),
    actionRoute('return'),
    actionRoute('terminate'),
    actionRoute('urge'),
  ];
}
