/**
 * POST .../rows/pivot. The spec shows no payload; the emulator takes
 * `{groupBy: field | field[], values?: [{field, aggregation: count|sum|avg|min|max}],
 * filter?, search?}` and answers `{groupBy, groups: [{group: {<field>: {key, label}},
 * count, values: [{field, aggregation, value}]}], total}`. A row with several values in
 * a multi-valued field (multi-select, members) counts in each of their groups.
 */
import { paramError } from '../emulator-error.ts';
import { asObject, asString, bodyObject, describe, optionalArray } from '../input.ts';
import type { EmulatorState, StoredRow, WorksheetRecord } from '../state/records.ts';
import { plainText, titleText } from './read-format.ts';
import { resolveTarget } from './row-filter.ts';
import type { ResolvedTarget } from './row-filter.ts';
import { matchingRows } from './row-query.ts';
import type { ListOptions } from './row-query.ts';

const AGGREGATIONS = ['count', 'sum', 'avg', 'min', 'max'] as const;
type Aggregation = (typeof AGGREGATIONS)[number];

interface GroupCell {
  key: string;
  label: string;
}

function labelOf(state: EmulatorState, resolved: ResolvedTarget, key: string): string {
  const field = resolved.field;
  if (field === undefined) return state.users.get(key)?.fullname ?? key;
  switch (field.type) {
    case 'SingleSelect':
    case 'Dropdown':
    case 'MultipleSelect':
      return field.options.find((o) => o.key === key)?.value ?? key;
    case 'Collaborator':
      return state.users.get(key)?.fullname ?? key;
    case 'Department':
      return state.departments.get(key)?.name ?? key;
    case 'Region':
      return state.regions.get(key)?.name ?? key;
    case 'Relation': {
      const target = state.worksheets.get(field.dataSource ?? '');
      const related = target?.table.byId.get(key);
      return target === undefined || related === undefined ? key : titleText(state, target, related);
    }
    default:
      return key;
  }
}

function cellsOf(state: EmulatorState, resolved: ResolvedTarget, row: StoredRow): GroupCell[] {
  const t = resolved.target;
  let keys: readonly string[];
  if (t.family === 'set') keys = t.get(row);
  else if (t.family === 'id') keys = [row.id];
  else if (t.family === 'time') keys = [new Date(t.get(row)).toISOString().slice(0, 10)];
  else if (resolved.field !== undefined) keys = [plainText(state, resolved.field, row)];
  else {
    const value = t.get(row);
    keys = [typeof value === 'string' || typeof value === 'number' ? String(value) : ''];
  }
  if (keys.length === 0) return [{ key: '', label: '' }];
  return keys.map((key) => ({ key, label: labelOf(state, resolved, key) }));
}

function combinations(lists: GroupCell[][]): GroupCell[][] {
  return lists.reduce<GroupCell[][]>(
    (acc, cells) => acc.flatMap((prefix) => cells.map((c) => [...prefix, c])),
    [[]],
  );
}

export function pivot(
  state: EmulatorState,
  ws: WorksheetRecord,
  rawBody: unknown,
  options: ListOptions,
): unknown {
  const body = bodyObject(rawBody);
  const groupByRaw = body['groupBy'];
  const groupBy = (Array.isArray(groupByRaw) ? groupByRaw : [groupByRaw]).map((g, i) =>
    asString(g, `groupBy[${i}]`),
  );
  const groupTargets = groupBy.map((name, i) => resolveTarget(state, ws, name, `groupBy[${i}]`));
  const values = optionalArray(body['values'], 'values').map((raw, i) => {
    const spec = asObject(raw, `values[${i}]`);
    const aggregation = asString(
      spec['aggregation'] ?? 'count',
      `values[${i}].aggregation`,
    ).toLowerCase() as Aggregation;
    if (!AGGREGATIONS.includes(aggregation)) {
      throw paramError(
        `values[${i}].aggregation ${describe(spec['aggregation'])} is not one of ${AGGREGATIONS.join(', ')}`,
      );
    }
    const field = asString(spec['field'], `values[${i}].field`);
    const resolved = resolveTarget(state, ws, field, `values[${i}].field`);
    if (aggregation !== 'count' && resolved.target.family !== 'number') {
      throw paramError(
        `values[${i}]: ${aggregation} needs a number field, ${resolved.target.label} is not one`,
      );
    }
    return { field, aggregation, resolved };
  });

  const rows = matchingRows(state, ws, body, options);
  const groups = new Map<string, { cells: GroupCell[]; rows: StoredRow[] }>();
  for (const row of rows) {
    for (const cells of combinations(groupTargets.map((t) => cellsOf(state, t, row)))) {
      const id = JSON.stringify(cells.map((c) => c.key));
      const group = groups.get(id) ?? { cells, rows: [] };
      group.rows.push(row);
      groups.set(id, group);
    }
  }

  const out = [...groups.values()].map(({ cells, rows: members }) => ({
    group: Object.fromEntries(groupBy.map((name, i) => [name, cells[i]])),
    count: members.length,
    values: values.map(({ field, aggregation, resolved }) => {
      const t = resolved.target;
      const numbers =
        t.family === 'number' ? members.map((r) => t.get(r)).filter((n): n is number => n !== undefined) : [];
      const value = {
        count: t.family === 'number' ? numbers.length : members.length,
        sum: numbers.reduce((a, b) => a + b, 0),
        avg: numbers.length === 0 ? 0 : numbers.reduce((a, b) => a + b, 0) / numbers.length,
        min: numbers.length === 0 ? 0 : numbers.reduce((a, b) => Math.min(a, b)),
        max: numbers.length === 0 ? 0 : numbers.reduce((a, b) => Math.max(a, b)),
      }[aggregation];
      return { field, aggregation, value };
    }),
  }));
  out.sort((a, b) => b.count - a.count || JSON.stringify(a.group).localeCompare(JSON.stringify(b.group)));
  return { groupBy, groups: out, total: rows.length };
}
