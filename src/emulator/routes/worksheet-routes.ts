/**
 * Spec §4 "Worksheet". The platform dialect's list answers `[{id, name, remark}]`, or its
 * Markdown table with `responseFormat: "md"`, narrowed to the ids in `worksheets`; create
 * answers `{worksheetId}`. The spec dialect's list also carries `alias`, and create
 * answers the new structure (with `id` and `worksheetId`).
 */
import type { EmulatorDeps } from '../deps.ts';
import { asString, bodyObject, optionalArray, optionalString } from '../input.ts';
import { paramError } from '../emulator-error.ts';
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
        const body = bodyObject(ctx.body);
        const keywords = optionalString(body['keywords'], 'keywords').toLowerCase();
        const wanted = optionalArray(body['worksheets'], 'worksheets').map((id, i) =>
          asString(id, `worksheets[${i}]`),
        );
        const format = optionalString(body['responseFormat'], 'responseFormat', 'json');
        if (format !== 'json' && format !== 'md')
          throw paramError(`responseFormat must be "json" or "md", got "${format}"`);
        const sheets = ctx.app.worksheetIds
          .map((id) => deps.state.worksheets.get(id))
          .filter(
            (ws): ws is WorksheetRecord =>
              ws !== undefined &&
              ws.name.toLowerCase().includes(keywords) &&
              (wanted.length === 0 ||
                wanted.includes(ws.id) ||
                (ws.alias !== '' && wanted.includes(ws.alias))),
          );
        if (deps.options.dialect !== 'platform')
          return sheets.map((ws) => ({ id: ws.id, name: ws.name, alias: ws.alias, remark: ws.remark }));
        if (format === 'json') return sheets.map((ws) => ({ id: ws.id, name: ws.name, remark: ws.remark }));
        // The Markdown form: cells split by the full-width bar U+FF5C, a trailing newline (platform-shapes §4 [C]).
        const line = (cells: string[]) => `${cells.map((c) => c.replace(/[｜\n]/g, ' ')).join('｜')}\n`;
        return [['id', 'name', 'remark'], ...sheets.map((ws) => [ws.id, ws.name, ws.remark])]
          .map(line)
          .join('');
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
