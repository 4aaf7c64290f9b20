/**
 * The row extras of spec §4: related rows, pivot, share link, logs, discussions.
 * Payloads the spec does not show are documented on each handler.
 */
import type { EmulatorDeps } from '../deps.ts';
import { platformPivot } from '../rows/platform-pivot.ts';
import { notFound, paramError } from '../emulator-error.ts';
import { asString, bodyObject } from '../input.ts';
import { pivot } from '../rows/pivot.ts';
import { readValue } from '../rows/read-format.ts';
import { rowLog } from '../rows/row-log.ts';
import { listOptions, readPaging } from '../rows/row-query.ts';
import { liveRow } from '../rows/row-table.ts';
import type { AppRouteContext, Route } from '../router.ts';
import type { FieldRecord, StoredRow, WorksheetRecord } from '../state/records.ts';
import { findWorksheet } from '../worksheets/worksheet-model.ts';
import { renderOptions, renderRows } from './render.ts';

const ROW = '/app/worksheets/{worksheet_id}/rows/{row_id}';

function page<T>(
  items: readonly T[],
  query: URLSearchParams,
): { items: T[]; total: number; pageIndex: number; pageSize: number } {
  const { pageSize, pageIndex } = readPaging(Object.fromEntries(query), false);
  const offset = (pageIndex - 1) * pageSize;
  return { items: items.slice(offset, offset + pageSize), total: items.length, pageIndex, pageSize };
}

export function createRowExtraRoutes(deps: EmulatorDeps): Route[] {
  const sheet = (ctx: AppRouteContext) => findWorksheet(deps, ctx.app, ctx.params['worksheet_id'] ?? '');
  /** Logs and discussions stay readable in the recycle bin; other reads need a live row. */
  const row = (ctx: AppRouteContext, ws: WorksheetRecord, allowDeleted = false): StoredRow => {
    const rowId = ctx.params['row_id'] ?? '';
    const found = allowDeleted ? ws.table.byId.get(rowId) : liveRow(ws.table, rowId);
    if (found === undefined)
      throw notFound(`row ${rowId} does not exist in worksheet "${ws.name}" or was deleted`);
    return found;
  };
  const valueAs = (field: FieldRecord, from: StoredRow, value: unknown): unknown =>
    readValue(deps.state, field, { ...from, values: value === undefined ? {} : { [field.id]: value } });

  return [
    {
      // data: {rows, total, pageIndex, pageSize}: the live related rows, in the shape of row lists.
      method: 'GET',
      path: `${ROW}/relations/{field}`,
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        const source = row(ctx, ws);
        const ref = ctx.params['field'] ?? '';
        const field = ws.byKey.get(ref);
        if (field?.type !== 'Relation')
          throw paramError(`"${ref}" is not a relation field of worksheet "${ws.name}"`);
        const target = deps.state.worksheets.get(field.dataSource ?? '');
        if (target === undefined) throw notFound(`the worksheet related by "${ref}" no longer exists`);
        const ids = Array.isArray(source.values[field.id]) ? (source.values[field.id] as string[]) : [];
        const related = ids
          .map((id) => liveRow(target.table, id))
          .filter((r): r is StoredRow => r !== undefined);
        const p = page(related, ctx.query);
        const query: Record<string, unknown> = Object.fromEntries(ctx.query);
        if (deps.options.dialect === 'platform') {
          // platform-shapes §10 [C]: `isReturnSystemFields`, and rows of {id, _createAt
          // (sic), _updatedAt, _owner, fields}, `{rows, total}` only.
          const { isReturnSystemFields, ...rest } = query;
          const rows = renderRows(
            deps,
            target,
            p.items,
            renderOptions(deps, target, { ...rest, includeSystemFields: isReturnSystemFields ?? false }),
          );
          return {
            rows: rows.map((r) => {
              const {
                _createdAt,
                _createdBy: _c,
                _updatedBy: _u,
                autoid: _a,
                ...kept
              } = r as Record<string, unknown>;
              return _createdAt === undefined ? kept : { ...kept, _createAt: _createdAt };
            }),
            total: p.total,
          };
        }
        const rows = renderRows(deps, target, p.items, renderOptions(deps, target, query));
        return { rows, total: p.total, pageIndex: p.pageIndex, pageSize: p.pageSize };
      },
    },
    {
      method: 'POST',
      path: '/app/worksheets/{worksheet_id}/rows/pivot',
      scope: 'app',
      write: false,
      handler: (ctx) =>
        deps.options.dialect === 'platform'
          ? platformPivot(deps.state, sheet(ctx), ctx.body, listOptions(deps.options))
          : pivot(deps.state, sheet(ctx), ctx.body, listOptions(deps.options)),
    },
    {
      // data: {shareLink}: one stable public link per row.
      method: 'POST',
      path: `${ROW}/share-link`,
      scope: 'app',
      handler: (ctx) => {
        const found = row(ctx, sheet(ctx));
        found.shareToken ??= deps.ids.secret(12);
        return { shareLink: `${ctx.baseUrl}/public/record/${found.shareToken}` };
      },
    },
    {
      // data: {logs: [{id, action, operator, createdAt, changes: [{id, alias, name, before, after}]}], total}, newest first.
      method: 'GET',
      path: `${ROW}/logs`,
      scope: 'app',
      handler: (ctx) => {
        const ws = sheet(ctx);
        const found = row(ctx, ws, true);
        const logs = rowLog(found)
          .map((entry, i) => {
            const changes =
              entry.values !== undefined
                ? ws.fields
                    .filter((f) => entry.values?.[f.id] !== undefined)
                    .map((f) => ({ fieldId: f.id, before: undefined, after: entry.values?.[f.id] }))
                : (entry.changes ?? []);
            return {
              id: `${found.id}-${i + 1}`,
              action: entry.action,
              operator: entry.by,
              createdAt: new Date(entry.at).toISOString(),
              changes: changes.flatMap((c) => {
                const field = ws.byKey.get(c.fieldId);
                if (field === undefined) return [];
                return [
                  {
                    id: field.id,
                    alias: field.alias,
                    name: field.name,
                    before: valueAs(field, found, c.before),
                    after: valueAs(field, found, c.after),
                  },
                ];
              }),
            };
          })
          .reverse();
        const p = page(logs, ctx.query);
        return { logs: p.items, total: p.total, pageIndex: p.pageIndex, pageSize: p.pageSize };
      },
    },
    {
      // data: {discussions: [{id, message, createdBy, createdAt}], total}, newest first.
      method: 'GET',
      path: `${ROW}/discussions`,
      scope: 'app',
      handler: (ctx) => {
        const found = row(ctx, sheet(ctx), true);
        const all = [...(found.discussions ?? [])]
          .reverse()
          .map((d) => ({ ...d, createdAt: new Date(d.createdAt).toISOString() }));
        const p = page(all, ctx.query);
        return { discussions: p.items, total: p.total, pageIndex: p.pageIndex, pageSize: p.pageSize };
      },
    },
    {
      // An emulator extra so clients and tests can start a discussion: body {message} → {id}.
      method: 'POST',
      path: `${ROW}/discussions`,
      scope: 'app',
      handler: (ctx) => {
        const found = row(ctx, sheet(ctx));
        const message = asString(bodyObject(ctx.body)['message'], 'message');
        const discussion = {
          id: deps.ids.objectId(),
          message,
          createdBy: ctx.principal.user,
          createdAt: deps.options.now(),
        };
        (found.discussions ??= []).push(discussion);
        return { id: discussion.id };
      },
    },
  ];
}
