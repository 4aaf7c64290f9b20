/**
 * Row endpoints of spec §4 "Row": list, get, create, update, delete, and their batch forms.
 * The platform dialect answers a list with `{rows, total?}` and attributes writes to `user-api`.
 */
import type { EmulatorDeps } from '../deps.ts';
import { notFound } from '../emulator-error.ts';
import { bodyObject, optionalBoolean } from '../input.ts';
import { liveRow } from '../rows/row-table.ts';
import { listOptions, listRows } from '../rows/row-query.ts';
import type { RowAuthor } from '../rows/row-writer.ts';
import type { UserRef } from '../wire-types.ts';
import { createRow, createRows, deleteRow, deleteRows, updateRow, updateRows } from '../rows/row-writer.ts';
import type { AppRouteContext, Route } from '../router.ts';
import { API_USER, UNASSIGNED_OWNER } from '../state/create-state.ts';
import { findWorksheet } from '../worksheets/worksheet-model.ts';
import { markdownTable, renderOptions, renderRows } from './render.ts';

const ROWS = '/app/worksheets/{worksheet_id}/rows';

export function createRowRoutes(deps: EmulatorDeps): Route[] {
  const sheet = (ctx: AppRouteContext) => findWorksheet(deps, ctx.app, ctx.params['worksheet_id'] ?? '');
  const body = (ctx: AppRouteContext) => {
    const b = bodyObject(ctx.body);
    optionalBoolean(b['triggerWorkflow'], 'triggerWorkflow', true);
    return b;
  };
  // `permanent` travels in the body (platform notes §2); a query flag is accepted too.
  const permanent = (ctx: AppRouteContext) =>
    optionalBoolean(bodyObject(ctx.body)['permanent'], 'permanent', false) ||
    ctx.query.get('permanent') === 'true';

  // The platform names its API user as the writer of every API write, whatever the
  // credential, and leaves the owner of a created row unassigned (platform-shapes §3 [C]).
  const platform = deps.options.dialect === 'platform';
  const writer = (ctx: AppRouteContext): UserRef => (platform ? API_USER : ctx.principal.user);
  const author = (ctx: AppRouteContext): RowAuthor =>
    platform
      ? { by: API_USER, owner: UNASSIGNED_OWNER }
      : { by: ctx.principal.user, owner: ctx.principal.user };

  return [
    {
      method: 'POST',
      path: `${ROWS}/list`,
      scope: 'app',
      write: false,
      handler: (ctx) => {
        const ws = sheet(ctx);
        const b = bodyObject(ctx.body);
        const page = listRows(deps.state, ws, b, listOptions(deps.options));
        const options = renderOptions(deps, ws, b);
        const rows =
          b['responseFormat'] === 'md'
            ? markdownTable(deps, ws, page.rows, options)
            : renderRows(deps, ws, page.rows, options);
        const total = page.total === undefined ? {} : { total: page.total };
        // The platform's answer is `{rows, total?}` (platform-shapes §5 [C]); the seed spec echoes the paging.
        return deps.options.dialect === 'platform'
          ? { rows, ...total }
          : { rows, ...total, pageIndex: page.pageIndex, pageSize: page.pageSize };
      },
    },
    {
      method: 'GET',
      path: `${ROWS}/{row_id}`,
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        const rowId = ctx.params['row_id'] ?? '';
        const row = liveRow(ws.table, rowId);
        if (row === undefined)
          throw notFound(`row ${rowId} does not exist in worksheet "${ws.name}" or was deleted`);
        // GET row has no useFieldIdAsKey and the platform keys its values by field id (platform-shapes §6 [C]).
        const options = renderOptions(deps, ws, Object.fromEntries(ctx.query), platform);
        return renderRows(deps, ws, [row], options)[0];
      },
    },
    {
      method: 'POST',
      path: ROWS,
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        return { id: createRow(deps, ws, body(ctx)['fields'], author(ctx)) };
      },
    },
    {
      method: 'PATCH',
      path: `${ROWS}/{row_id}`,
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        const rowId = ctx.params['row_id'] ?? '';
        updateRow(deps, ws, rowId, body(ctx)['fields'], writer(ctx));
        return { id: rowId };
      },
    },
    {
      method: 'DELETE',
      path: `${ROWS}/{row_id}`,
      scope: 'app',
      handler: (ctx) => {
        deleteRow(deps, sheet(ctx), ctx.params['row_id'] ?? '', permanent(ctx), writer(ctx));
        return {};
      },
    },
    {
      method: 'POST',
      path: `${ROWS}/batch`,
      scope: 'app',
      handler: (ctx) => ({ rowIds: createRows(deps, sheet(ctx), body(ctx)['rows'], author(ctx)) }),
    },
    {
      method: 'PATCH',
      path: `${ROWS}/batch`,
      scope: 'app',
      handler: (ctx) => {
        const b = body(ctx);
        return updateRows(deps, sheet(ctx), b['rowIds'], b['fields'], writer(ctx));
      },
    },
    {
      method: 'DELETE',
      path: `${ROWS}/batch`,
      scope: 'app',
      handler: (ctx) => {
        deleteRows(deps, sheet(ctx), body(ctx)['rowIds'], permanent(ctx), writer(ctx));
        return {};
      },
    },
  ];
}
