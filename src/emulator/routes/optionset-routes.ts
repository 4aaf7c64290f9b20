/**
 * Spec §4 option sets. Create `{name, options: [{value, index?, color?}]}` → `{id}`; PUT
 * replaces name and options (options sent with their key keep it, others are new);
 * DELETE deactivates: the set leaves the list but stays readable (extra GET by id).
 * More options than `maxOptionsPerField` is 100006.
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { notFound } from '../emulator-error.ts';
import { asString, bodyObject } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';
import type { OptionSetRecord } from '../state/records.ts';
import { buildOptions } from '../worksheets/build-field.ts';

export function createOptionSetRoutes(deps: EmulatorDeps): Route[] {
  const optionSet = (ctx: AppRouteContext): OptionSetRecord => {
    const id = ctx.params['optionset_id'] ?? '';
    const found = ctx.app.optionSets.get(id);
    if (found === undefined) throw notFound(`option set ${id} does not exist`);
    return found;
  };
  const view = (s: OptionSetRecord) => ({ ...s, options: s.options.filter((o) => !o.isDeleted) });
  return [
    {
      method: 'GET',
      path: '/app/optionsets',
      scope: 'app',
      handler: (ctx) => [...ctx.app.optionSets.values()].filter((s) => s.isActive).map(view),
    },
    {
      method: 'GET',
      path: '/app/optionsets/{optionset_id}',
      scope: 'app',
      handler: (ctx) => view(optionSet(ctx)),
    },
    {
      method: 'POST',
      path: '/app/optionsets',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const id = deps.ids.objectId();
        const options = buildOptions(deps, body['options'], 'options');
        ctx.app.optionSets.set(id, {
          id,
          name: asString(body['name'], 'name'),
          options,
          isActive: true,
          createdAt: isoNow(deps),
        });
        return { id };
      },
    },
    {
      method: 'PUT',
      path: '/app/optionsets/{optionset_id}',
      scope: 'app',
      handler: (ctx) => {
        const set = optionSet(ctx);
        const body = bodyObject(ctx.body);
        const name = asString(body['name'], 'name');
        set.options = buildOptions(deps, body['options'], 'options', set.options);
        set.name = name;
        return view(set);
      },
    },
    {
      method: 'DELETE',
      path: '/app/optionsets/{optionset_id}',
      scope: 'app',
      handler: (ctx) => {
        optionSet(ctx).isActive = false;
        return {};
      },
    },
  ];
}
