/**
 * Spec §4 "Worksheet". Create answers the new structure (with `id` and `worksheetId`);
 * the list answers `[{id, name, alias, remark}]` as spec §2 "Worksheet list item",
 * optionally narrowed by `keywords`.
 */
import type { EmulatorDeps } from '../deps.ts';
import { bodyObject, optionalString } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';
import type { WorksheetRecord } from '../state/records.ts';
import { platformStructureView, structureView } from '../worksheets/structure-view.ts';
import { updateStructure } from '../worksheets/update-structure.ts';
import { createWorksheet, deleteWorksheet, findWorksheet } from '../worksheets/worksheet-model.ts';

export function createWorksheetRoutes(deps: EmulatorDeps): Route[] {
  const sheet = (ctx: AppRouteContext) => findWorksheet(deps, ctx.app, ctx.params['worksheet_id'] ?? '');
  return [
    {
      method: 'POST',
      path: '/app/worksheets/list',
      scope: 'app',
      write: false,
      handler: (ctx) => {
        const keywords = optionalString(bodyObject(ctx.body)['keywords'], 'keywords').toLowerCase();
        return ctx.app.worksheetIds
          .map((id) => deps.state.worksheets.get(id))
          .filter((ws): ws is WorksheetRecord => ws !== undefined && ws.name.toLowerCase().includes(keywords))
          .map((ws) => ({ id: ws.id, name: ws.name, alias: ws.alias, remark: ws.remark }));
      },
    },
    {
      method: 'POST',
      path: '/app/worksheets',
      scope: 'app',
      handler: (ctx) => {
        const ws = createWorksheet(deps, ctx.app, ctx.body);
        return deps.options.dialect === 'platform'
          ? { worksheetId: ws.id }
          : { worksheetId: ws.id, ...structureView(ws, deps.options.typeFormat) };
      },
    },
    {
      method: 'GET',
      path: '/app/worksheets/{worksheet_id}',
      scope: 'app',
      handler: (ctx) =>
        deps.options.dialect === 'platform'
          ? platformStructureView(sheet(ctx))
          : structureView(sheet(ctx), deps.options.typeFormat),
    },
    {
      // The platform's path for a structure update (platform-shapes §11 [C]).
      method: 'POST',
      path: '/app/worksheets/{worksheet_id}',
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        updateStructure(deps, ctx.app, ws, ctx.body);
        return deps.options.dialect === 'platform'
          ? platformStructureView(ws)
          : structureView(ws, deps.options.typeFormat);
      },
    },
    {
      method: 'POST',
      path: '/app/worksheets/{worksheet_id}/structure',
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        updateStructure(deps, ctx.app, ws, ctx.body);
        return structureView(ws, deps.options.typeFormat);
      },
    },
    {
      method: 'DELETE',
      path: '/app/worksheets/{worksheet_id}',
      scope: 'app',
      handler: (ctx) => {
        deleteWorksheet(deps, ctx.app, sheet(ctx));
        return {};
      },
    },
  ];
}
