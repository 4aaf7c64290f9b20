/** Packs a batch job's rows by column for Redis (the format: ./columnar-rows.ts). */
import type { FieldValue } from '../../api/types.ts';
import type { BatchRow } from './batch-row.ts';
import type { ColumnarField, ColumnarRows, RowExtras } from './columnar-rows.ts';
import { joined } from './joined-column.ts';

function isOneId(value: unknown): value is [string] {
  return Array.isArray(value) && value.length === 1 && typeof value[0] === 'string';
}

/**
 * Whether `data`'s own keys are exactly `columns`, in order, none holding `undefined`
 * (which JSON drops from an object but writes as `null` in an array).
 */
function hasColumns(data: Record<string, unknown>, columns: readonly string[]): boolean {
  let i = 0;
  for (const key in data) {
    if (!Object.hasOwn(data, key)) continue;
    if (columns[i] !== key || data[key] === undefined) return false;
    i += 1;
  }
  return i === columns.length;
}

function sameIds(fields: readonly FieldValue[], ids: readonly string[]): boolean {
  if (fields.length !== ids.length) return false;
  for (let i = 0; i < fields.length; i++) if (fields[i]!.id !== ids[i]) return false;
  return true;
}

/** What `row` has beyond the job's `columns` and `fieldIds`, or `undefined` (most rows). */
function extrasOf(
  row: BatchRow,
  columns: readonly string[],
  fieldIds: readonly string[],
): RowExtras | undefined {
  const { source, mapped } = row;
  const { position } = source;
  let extras: RowExtras | undefined;
  if (position.page !== undefined) (extras ??= {}).page = position.page;
  if (position.id !== undefined) (extras ??= {}).id = position.id;
  if (position.idColumn !== undefined) (extras ??= {}).idColumn = position.idColumn;
  if (source.cursor !== undefined) (extras ??= {}).cursor = source.cursor;
  if (mapped.pending !== undefined) (extras ??= {}).pending = mapped.pending;
  if (!hasColumns(source.data, columns)) (extras ??= {}).data = source.data;
  const { fields } = mapped;
  if (!sameIds(fields, fieldIds)) {
    (extras ??= {}).fields = fields;
    return extras;
  }
  for (let f = 0; f < fields.length; f++) {
    const field = fields[f]!;
    if (field.type !== undefined)
      ((extras ??= {}).types ??= new Array<string | null>(fields.length).fill(null))[f] = field.type;
    if (field.value === undefined) ((extras ??= {}).undefinedValues ??= []).push(f);
  }
  return extras;
}

/**
 * `rows` by column (see {@link ColumnarRows}). `fieldSources` names the column each
 * mapped field is read from (the plan's `column`).
 */
export function packColumns(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined> = [],
): ColumnarRows {
  const head = rows[0];
  if (head === undefined)
    return { n: 0, first: 0, hash: '', columns: [], values: [], fieldIds: [], fields: [] };
  const columns = Object.keys(head.source.data);
  const fieldIds = head.mapped.fields.map((f) => f.id);
  const n = rows.length;
  const values = columns.map(() => new Array<unknown>(n));
  const fieldValues = fieldIds.map(() => new Array<unknown>(n));
  const indexes = new Array<number>(n);
  const lines = new Array<number | null>(n);
  const keys = new Array<string | null>(n);
  const hashes = new Array<string>(n);
  let consecutive = true;
  let lineOffset: number | undefined =
    head.source.position.line === undefined ? undefined : head.source.position.line - head.index;
  let anyKey = false;
  let oneHash = true;
  let extras: Record<string, RowExtras> | undefined;
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    const { index, source, mapped } = row;
    const own = extrasOf(row, columns, fieldIds);
    if (own !== undefined) (extras ??= {})[String(i)] = own;
    indexes[i] = index;
    if (index !== head.index + i) consecutive = false;
    const line = source.position.line ?? null;
    lines[i] = line;
    if (line === null || lineOffset === undefined || line - index !== lineOffset) lineOffset = undefined;
    keys[i] = mapped.key ?? null;
    if (mapped.key !== undefined) anyKey = true;
    hashes[i] = mapped.hash;
    if (mapped.hash !== head.mapped.hash) oneHash = false;
    // A row with extras of its own keeps null in their place: JSON's own form of `undefined` in an array.
    const { data } = source;
    const dataOwn = own?.data !== undefined;
    for (let c = 0; c < columns.length; c++) values[c]![i] = dataOwn ? null : data[columns[c]!];
    const { fields } = mapped;
    const fieldsOwn = own?.fields !== undefined;
    for (let f = 0; f < fieldIds.length; f++)
      fieldValues[f]![i] = fieldsOwn ? null : (fields[f]!.value ?? null);
  }
  const fields = fieldValues.map((column, f): ColumnarField => {
    const c = fieldSources[f] === undefined ? -1 : columns.indexOf(fieldSources[f]);
    if (c >= 0 && column.every((v, i) => typeof v === 'string' && v === values[c]![i])) return { c };
    if (column.every(isOneId)) {
      const d: string[] = [];
      const at = new Map<string, number>();
      const r = column.map((v) => {
        const id = v[0];
        let k = at.get(id);
        if (k === undefined) {
          k = d.length;
          d.push(id);
          at.set(id, k);
        }
        return k;
      });
      return { d, r };
    }
    return joined(column);
  });
  return {
    n,
    first: head.index,
    ...(consecutive ? {} : { indexes }),
    ...(lineOffset === undefined ? { lines } : { lineOffset }),
    ...(anyKey ? { keys } : {}),
    hash: oneHash ? head.mapped.hash : hashes,
    columns,
    values: values.map(joined),
    fieldIds,
    fields,
    ...(extras === undefined ? {} : { extras }),
  };
}
