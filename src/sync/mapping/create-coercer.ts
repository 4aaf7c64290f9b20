/**
 * Picks and configures the coercer for one field type, or says why the field cannot be
 * written. Runs once per mapped field at validation time.
 */
import type { FieldTypeName } from '../../api/field-types.ts';
import type { WorksheetField } from '../../api/types.ts';
import type { FieldMapping } from '../model/types.ts';
import { type Coercer } from './coerce-result.ts';
import { createDateCoercer } from './coerce-date.ts';
import { memoize } from './memo-coercer.ts';
import {
  createAttachmentCoercer,
  createReferenceCoercer,
  createSingleCoercer,
  createTableCoercer,
} from './coerce-reference.ts';
import {
  createCheckboxCoercer,
  createNumberCoercer,
  createRatingCoercer,
  createRegionCoercer,
  createTextCoercer,
} from './coerce-scalar.ts';
import { createSelectCoercer } from './coerce-select.ts';
import { createOptionIndex, type OptionIndex } from './option-index.ts';
import type { ReferenceSpec } from './plan-types.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';

/** Types rowbridge can write, in the order error messages list them. */
export const WRITABLE_FIELD_TYPES: readonly FieldTypeName[] = [
  'Text',
  'RichText',
  'Certificate',
  'Email',
  'PhoneNumber',
  'LandlinePhone',
  'Number',
  'Currency',
  'Rating',
  'Checkbox',
  'Date',
  'DateTime',
  'Time',
  'SingleSelect',
  'Dropdown',
  'MultipleSelect',
  'Attachment',
  'Region',
  'Collaborator',
  'Department',
  'Relation',
];

const WRITABLE: ReadonlySet<FieldTypeName> = new Set(WRITABLE_FIELD_TYPES);

export function isWritableFieldType(type: FieldTypeName): boolean {
  return WRITABLE.has(type);
}

export interface FieldCoercion {
  coerce: Coercer;
  options: OptionIndex | undefined;
  reference: ReferenceSpec | undefined;
  writeType: string | undefined;
}

export interface CoercerContext {
  field: WorksheetField;
  type: FieldTypeName;
  mapping: FieldMapping;
  source: ZoneClock;
  target: ZoneClock;
}

/** The coercion for a writable type; the mapping's options were checked before. */
export function createFieldCoercion(context: CoercerContext): FieldCoercion {
  const coercion = typeCoercion(context);
  const { type, field } = context;
  // platform-shapes §4: Collaborator subType 0 single, 1 multiple; Relation 1 single, 2 multiple.
  if (type === 'Collaborator' && field.subType === 0)
    return { ...coercion, coerce: createSingleCoercer(coercion.coerce, 'member (Collaborator subType 0)') };
  if (type === 'Relation' && field.subType === 1)
    return { ...coercion, coerce: createSingleCoercer(coercion.coerce, 'related row (Relation subType 1)') };
  return coercion;
}

function typeCoercion({ field, type, mapping, source, target }: CoercerContext): FieldCoercion {
  const plain = (coerce: Coercer): FieldCoercion => ({
    coerce,
    options: undefined,
    reference: undefined,
    writeType: undefined,
  });
  switch (type) {
    case 'Text':
    case 'RichText':
    case 'Certificate':
    case 'Email':
    case 'PhoneNumber':
    case 'LandlinePhone':
      return plain(createTextCoercer(type));
    case 'Number':
    case 'Currency':
      return plain(createNumberCoercer());
    case 'Rating':
      return plain(createRatingCoercer(field.max));
    case 'Checkbox':
      return plain(createCheckboxCoercer());
    case 'Date':
    case 'DateTime':
    case 'Time':
      // Pure for the field's format and zones, and dates repeat: ./memo-coercer.ts.
      return plain(
        memoize(createDateCoercer(type, { format: mapping.format, source, target, subType: field.subType })),
      );
    case 'Region':
      return plain(createRegionCoercer());
    case 'SingleSelect':
    case 'Dropdown':
    case 'MultipleSelect': {
      const options = createOptionIndex(field.options);
      const multiple = type === 'MultipleSelect';
      const coerce = createSelectCoercer({
        multiple,
        createOptions: mapping.createOptions === true,
        options,
      });
      return { coerce, options, reference: undefined, writeType: undefined };
    }
    case 'Attachment':
      return { coerce: createAttachmentCoercer(), options: undefined, reference: undefined, writeType: '0' };
    case 'Collaborator': {
      if (mapping.lookupTable !== undefined) return plain(createTableCoercer(mapping.lookupTable, 'member'));
      const by = mapping.lookupBy ?? 'accountId';
      if (by === 'accountId') return plain(createReferenceCoercer('none'));
      return {
        coerce: createReferenceCoercer(by),
        options: undefined,
        reference: { kind: 'member', by },
        writeType: undefined,
      };
    }
    case 'Department':
      if (mapping.lookupTable !== undefined)
        return plain(createTableCoercer(mapping.lookupTable, 'department'));
      if (mapping.lookupBy !== 'name') return plain(createReferenceCoercer('none'));
      return {
        coerce: createReferenceCoercer('name'),
        options: undefined,
        reference: { kind: 'department', by: 'name' },
        writeType: undefined,
      };
    case 'Relation': {
      const keyField = mapping.relationKey ?? 'rowid';
      if (keyField === 'rowid') return plain(createReferenceCoercer('none'));
      const reference: ReferenceSpec = { kind: 'relation', worksheetId: field.dataSource ?? '', keyField };
      return { coerce: createReferenceCoercer('name'), options: undefined, reference, writeType: undefined };
    }
    default:
      throw new Error(`field type ${type} has no coercer`);
  }
}
