/** Render settings of a read request: server setting for the shape, request flags for the rest. */
import type { EmulatorDeps } from '../deps.ts';
import { paramError } from '../emulator-error.ts';
import { asString, describe, optionalArray } from '../input.ts';
import type { Json } from '../input.ts';
import { plainText, renderRow } from '../rows/read-format.ts';
import type { RenderOptions } from '../rows/read-format.ts';
import type { StoredRow, WorksheetRecord } from '../state/records.ts';

function flag(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null || value === '') return fallback;
  if (value === true || value === 'true' || value === '1') return true;
  if (value === false || value === 'false' || value === '0') return false;
  throw paramError(`${name} must be true or false, got ${describe(value)}`);
}

/**
 * Reads `useFieldIdAsKey`, `includeSystemFields` and the `fields` projection from a body or
 * query. `idKeys` is the key form when the request does not choose one.
 */
export function renderOptions(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  source: Json,
  idKeys = false,
): RenderOptions {
  // A query string carries the projection as `fields=a,b`.
  const listed =
    typeof source['fields'] === 'string'
      ? source['fields'].split(',').filter((f) => f !== '')
      : source['fields'];
  const projection = optionalArray(listed, 'fields').map((raw, i) => {
    const ref = asString(raw, `fields[${i}]`);
    const field = ws.byKey.get(ref);
    if (field === undefined)
      throw paramError(`fields[${i}]: "${ref}" is not a field of worksheet "${ws.name}"`);
    return field;
  });
  const platform = deps.options.dialect === 'platform';
  return {
    shape: deps.options.rowShape,
    dialect: deps.options.dialect,
    timeZone: deps.options.timeZone,
    typeFormat: deps.options.typeFormat,
    useFieldIdAsKey: flag(source['useFieldIdAsKey'], 'useFieldIdAsKey', idKeys),
    // The platform sends system fields only when asked (platform-shapes §5 [L]).
    includeSystemFields: flag(source['includeSystemFields'], 'includeSystemFields', !platform),
    fields: projection.length === 0 ? undefined : projection,
  };
}

export function renderRows(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rows: readonly StoredRow[],
  options: RenderOptions,
): unknown[] {
  return rows.map((row) => renderRow(deps.state, ws, row, options));
}

/** `responseFormat: "md"`: the page as a Markdown table, for reading by people and LLMs. */
export function markdownTable(
  deps: EmulatorDeps,
  ws: WorksheetRecord,
  rows: readonly StoredRow[],
  options: RenderOptions,
): string {
  const fields = options.fields ?? ws.fields;
  const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const head = `| rowid | ${fields.map((f) => cell(f.name)).join(' | ')} |`;
  const rule = `|${' --- |'.repeat(fields.length + 1)}`;
  const body = rows.map(
    (row) => `| ${row.id} | ${fields.map((f) => cell(plainText(deps.state, f, row))).join(' | ')} |`,
  );
  return [head, rule, ...body].join('\n');
}
