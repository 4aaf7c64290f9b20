/**
 * The platform's pivot (platform-shapes §10 [C]): body `{rows, columns, values: [{field,
 * aggregation}], filter?}` with COUNT on `record_count`; answer `{meta, pivot: [{columns,
 * rows, values}], summary, totalPages, currentPage}`. Computed by the emulator's own
 * grouping (pivot.ts), then put in that form.
 */
import { paramError } from '../emulator-error.ts';
import { asArray, asObject, asString, bodyObject } from '../input.ts';
import type { Json } from '../input.ts';
import type { EmulatorState, WorksheetRecord } from '../state/records.ts';
import { pivot } from './pivot.ts';
import type { ListOptions } from './row-query.ts';

interface Dimension {
  field: string;
  displayName: string;
  granularity: null;
}

function dimensions(raw: unknown, name: string): Dimension[] {
  return asArray(raw ?? [], name).map((item, i) => {
    const d = asObject(item, `${name}[${i}]`);
    const field = asString(d['field'], `${name}[${i}].field`);
    return {
      field,
      displayName: typeof d['displayName'] === 'string' ? d['displayName'] : field,
      granularity: null,
    };
  });
}

export function platformPivot(
  state: EmulatorState,
  ws: WorksheetRecord,
  rawBody: unknown,
  options: ListOptions,
): Json {
  const body = bodyObject(rawBody);
  const rows = dimensions(body['rows'], 'rows');
  const columns = dimensions(body['columns'], 'columns');
  const values = asArray(body['values'], 'values').map((item, i) => {
    const v = asObject(item, `values[${i}]`);
    const aggregation = asString(v['aggregation'], `values[${i}].aggregation`).toUpperCase();
    const field = asString(v['field'], `values[${i}].field`);
    if (aggregation === 'COUNT' && field !== 'record_count')
      throw paramError(`values[${i}]: COUNT takes field "record_count"`);
    return {
      field,
      displayName: typeof v['displayName'] === 'string' ? v['displayName'] : field,
      aggregation,
    };
  });
  if (values.length === 0) throw paramError('values: at least one aggregation is required');
  const groupBy = [...rows, ...columns].map((d) => d.field);
  const result = pivot(
    state,
    ws,
    {
      groupBy,
      values: values
        .filter((v) => v.aggregation !== 'COUNT')
        .map((v) => ({ field: v.field, aggregation: v.aggregation.toLowerCase() })),
      ...(body['filter'] === undefined ? {} : { filter: body['filter'] }),
    },
    options,
  ) as {
    groups: Array<{
      group: Record<string, { label: string }>;
      count: number;
      values: Array<{ field: string; value: unknown }>;
    }>;
  };
  const cell = (dims: Dimension[], group: Record<string, { label: string }>) =>
    Object.fromEntries(dims.map((d) => [d.field, group[d.field]?.label ?? '']));
  const valueOf = (g: (typeof result.groups)[number], field: string) =>
    field === 'record_count' ? g.count : (g.values.find((v) => v.field === field)?.value ?? null);
  const pivotRows = result.groups.map((g) => ({
    columns: cell(columns, g.group),
    rows: cell(rows, g.group),
    values: Object.fromEntries(values.map((v) => [v.field, valueOf(g, v.field)])),
  }));
  const summary = Object.fromEntries(
    values.map((v) => [
      v.field,
      v.field === 'record_count' ? result.groups.reduce((n, g) => n + g.count, 0) : null,
    ]),
  );
  return { meta: { columns, rows, values }, pivot: pivotRows, summary, totalPages: 1, currentPage: 1 };
}
