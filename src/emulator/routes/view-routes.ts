/**
 * Spec §4 "View, chart, custom page". Payloads the spec does not show: views
 * `{views: [{name, type?, config?}]}` → `[{id, name, type}]` (views also appear in the
 * worksheet structure); chart `{name, type?, config?}` → `{id}`; custom page PUT
 * `{name, components?, ...}` replaces the whole page (fields not sent are cleared).
 * Emulator extras to read and delete them: GET/DELETE of charts and custom pages.
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { notFound } from '../emulator-error.ts';
import { asArray, asObject, asString, bodyObject, optionalString } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';
import { findWorksheet } from '../worksheets/worksheet-model.ts';

export function createViewRoutes(deps: EmulatorDeps): Route[] {
  const sheet = (ctx: AppRouteContext) => findWorksheet(deps, ctx.app, ctx.params['worksheet_id'] ?? '');
  const chart = (ctx: AppRouteContext) => {
    const ws = sheet(ctx);
    const id = ctx.params['chart_id'] ?? '';
    const found = ws.charts.get(id);
    if (found === undefined) throw notFound(`chart ${id} does not exist`);
    return { ws, found };
  };
  const page = (ctx: AppRouteContext) => {
    const id = ctx.params['page_id'] ?? '';
    const found = ctx.app.customPages.get(id);
    if (found === undefined)
      throw notFound(
        `custom page ${id} does not exist; create it with POST /v3/app/items/batch (type customPage)`,
      );
    return found;
  };
  return [
    {
      method: 'POST',
      path: '/app/worksheets/{worksheet_id}/views/batch',
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        const views = asArray(bodyObject(ctx.body)['views'], 'views').map((raw, i) => {
          const input = asObject(raw, `views[${i}]`);
          const config = input['config'] === undefined ? {} : asObject(input['config'], `views[${i}].config`);
          return {
            id: deps.ids.objectId(),
            name: asString(input['name'], `views[${i}].name`),
            type: optionalString(input['type'], `views[${i}].type`, 'table'),
            config,
          };
        });
        ws.views.push(...views);
        return views.map((v) => ({ id: v.id, name: v.name, type: v.type }));
      },
    },
    {
      method: 'POST',
      path: '/app/worksheets/{worksheet_id}/charts',
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        const body = bodyObject(ctx.body);
        const id = deps.ids.objectId();
        ws.charts.set(id, {
          ...body,
          id,
          name: asString(body['name'], 'name'),
          type: optionalString(body['type'], 'type', 'bar'),
          createdAt: isoNow(deps),
        });
        return { id };
      },
    },
    {
      method: 'GET',
      path: '/app/worksheets/{worksheet_id}/charts',
      scope: 'app',
      handler: (ctx) => [...sheet(ctx).charts.values()],
    },
    {
      method: 'GET',
      path: '/app/worksheets/{worksheet_id}/charts/{chart_id}',
      scope: 'app',
      handler: (ctx) => chart(ctx).found,
    },
    {
      method: 'DELETE',
      path: '/app/worksheets/{worksheet_id}/charts/{chart_id}',
      scope: 'app',
      handler: (ctx) => {
        const { ws, found } = chart(ctx);
        ws.charts.delete(found.id);
        return {};
      },
    },
    {
      method: 'PUT',
      path: '/app/custom-pages/{page_id}',
      scope: 'app',
      handler: (ctx) => {
        const old = page(ctx);
        const body = bodyObject(ctx.body);
        const replaced = {
          ...body,
          id: old.id,
          name: asString(body['name'], 'name'),
          createdAt: old.createdAt,
          updatedAt: isoNow(deps),
        };
        ctx.app.customPages.set(old.id, replaced);
        return replaced;
      },
    },
    { method: 'GET', path: '/app/custom-pages/{page_id}', scope: 'app', handler: (ctx) => page(ctx) },
    {
      method: 'DELETE',
      path: '/app/custom-pages/{page_id}',
      scope: 'app',
      handler: (ctx) => {
        ctx.app.customPages.delete(page(ctx).id);
        for (const section of ctx.app.sections)
          section.items = section.items.filter((i) => i.id !== ctx.params['page_id']);
        return {};
      },
    },
  ];
}
