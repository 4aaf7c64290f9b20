/**
 * Checks the per-field options of a mapping (from/value, format, timezone,
 * createOptions, lookupBy, relationKey) against the field's type.
 */
import { type FieldTypeName, OPTION_FIELD_TYPES } from '../../api/field-types.ts';
import type { WorksheetField } from '../../api/types.ts';
import type { FieldMapping } from '../model/types.ts';
import { checkTemporalFormat } from './coerce-date.ts';

const TEMPORAL: ReadonlySet<FieldTypeName> = new Set(['Date', 'DateTime', 'Time']);

/** Problems with the options that only fit some types (format, createOptions, ...). */
export function fieldOptionProblems(m: FieldMapping, field: WorksheetField, type: FieldTypeName): string[] {
  const out: string[] = [];
  if (m.from === undefined && m.value === undefined && m.default === undefined) {
    out.push('needs `from` (a source column) or `value` (a constant)');
  }
  if (m.from !== undefined && m.value !== undefined) out.push('give either `from` or `value`, not both');
  if (m.format !== undefined) {
    if (!TEMPORAL.has(type)) out.push(`\`format\` applies to Date, DateTime and Time fields, not ${type}`);
    else {
      const problem = checkTemporalFormat(m.format);
      if (problem !== undefined) out.push(problem);
    }
  }
  if (m.timezone !== undefined && !TEMPORAL.has(type))
    out.push(`\`timezone\` applies to Date and DateTime fields, not ${type}`);
  if (m.createOptions === true && !OPTION_FIELD_TYPES.has(type)) {
    out.push(`\`createOptions\` applies to SingleSelect, Dropdown and MultipleSelect fields, not ${type}`);
  }
  if (m.lookupBy !== undefined) {
    if (type !== 'Collaborator' && type !== 'Department')
      out.push(`\`lookupBy\` applies to Collaborator and Department fields, not ${type}`);
    else if (type === 'Department' && m.lookupBy === 'email')
      out.push('departments are looked up by `name` (or written as ids without lookupBy)');
    else if (m.lookupBy === 'email') {
      // platform-shapes §9 [C]: /v3/users/lookup takes an exact name and masks emails.
      out.push(
        'members cannot be found by email: the platform masks emails in its user lookup. Use `lookupBy: name` (exact full name), `lookupBy: accountId`, or a `lookupTable` of email → accountId',
      );
    }
  }
  if (m.lookupTable !== undefined) {
    if (type !== 'Collaborator' && type !== 'Department')
      out.push(`\`lookupTable\` applies to Collaborator and Department fields, not ${type}`);
    else if (m.lookupBy !== undefined && m.lookupBy !== 'accountId')
      out.push('give either `lookupTable` or `lookupBy: name`, not both: the table is the whole lookup');
  }
  if (type === 'Relation') {
    if (m.relationKey === undefined || m.relationKey === '') {
      out.push(
        'relation fields need `relationKey`: the related worksheet\'s field (id or alias) to find rows by, or "rowid" when the source holds row ids',
      );
    } else if (m.relationKey !== 'rowid' && (field.dataSource === undefined || field.dataSource === '')) {
      out.push(
        'the worksheet structure does not name the related worksheet (dataSource), so rows cannot be looked up',
      );
    }
  } else if (m.relationKey !== undefined) out.push(`\`relationKey\` applies to Relation fields, not ${type}`);
  return out;
}
