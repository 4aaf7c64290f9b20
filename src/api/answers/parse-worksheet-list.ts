/**
 * `POST /v3/app/worksheets/list` → {@link WorksheetListItem}[] (platform-shapes §4,
 * `worksheets-list.json`). JSON form: `data = [{id, name, remark}]`. Markdown form
 * (`responseFormat: "md"`, the export's own example): `data` is one string, a table whose
 * cells are separated by the full-width bar `｜` (U+FF5C), header `id｜name｜remark` [C].
 */
import { AnswerShapeError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, firstId } from './read-loose.ts';

/** An element of the worksheet list. */
export interface WorksheetListItem {
  id: string;
  name: string;
  remark: string;
  /** Not in the platform's list [C]; kept when an answer carries it (the emulator's does). */
  alias?: string;
}

const BAR = '\uFF5C';

function fromMarkdown(ref: AnswerRef, table: string): WorksheetListItem[] {
  const lines = table.split(/\r?\n/).filter((line) => line.trim() !== '');
  const header = (lines[0] ?? '').split(BAR).map((cell) => cell.trim());
  const at = (name: string) => header.indexOf(name);
  if (at('id') === -1) {
    throw new AnswerShapeError(
      ref,
      `the Markdown worksheet list has no "id" column: its first line is ${JSON.stringify(lines[0] ?? '')}, expected cells separated by "${BAR}" (U+FF5C)`,
    );
  }
  return (
    lines
      .slice(1)
      // A Markdown separator row (---｜---) carries no worksheet.
      .filter((line) => !/^[\s|:\-\uFF5C]+$/.test(line))
      .map((line) => {
        const cells = line.split(BAR).map((cell) => cell.trim());
        const cell = (name: string) => (at(name) === -1 ? '' : (cells[at(name)] ?? ''));
        return { id: cell('id'), name: cell('name'), remark: cell('remark') };
      })
      .filter((item) => item.id !== '')
  );
}

/** Reads either form; throws {@link AnswerShapeError} on anything else or on an entry without an id. */
export function parseWorksheetList(data: unknown, ref: AnswerRef): WorksheetListItem[] {
  if (typeof data === 'string') return fromMarkdown(ref, data);
  if (!Array.isArray(data)) {
    throw new AnswerShapeError(
      ref,
      `expected a list of worksheets or a Markdown table, ${describeKeys(data)}`,
    );
  }
  return data.map((raw, at) => {
    const item = asRecord(raw);
    // This list uses `id` [C]; `worksheetId` is accepted in case it follows the structure's key.
    const found = item === undefined ? undefined : firstId(item, ['id', 'worksheetId']);
    if (item === undefined || found === undefined) {
      throw new AnswerShapeError(ref, `data[${at}] has no "id"; ${describeKeys(raw)}`);
    }
    const result: WorksheetListItem = {
      id: found.id,
      name: typeof item.name === 'string' ? item.name : '',
      remark: typeof item.remark === 'string' ? item.remark : '',
    };
    if (typeof item.alias === 'string') result.alias = item.alias;
    return result;
  });
}
