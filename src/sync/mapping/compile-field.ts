/**
 * Compiles one mapped field into a PlannedField: its coercer, and its constant and
 * default already coerced, so a bad constant is a mapping error, not a million row errors.
 */
import { ARRAY_VALUED_FIELD_TYPES, type FieldTypeName } from '../../api/field-types.ts';
import type { WorksheetField } from '../../api/types.ts';
import type { FieldMapping } from '../model/types.ts';
import { CoerceFailure } from './coerce-result.ts';
import { createFieldCoercion } from './create-coercer.ts';
import { isEmptyValue } from './is-empty-value.ts';
import type { PlannedField } from './plan-types.ts';
import { createValueTransform } from './value-transform.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';

/** Types where spaces are content: a blank string is a value, not an empty cell. */
export const TEXT_LIKE: ReadonlySet<FieldTypeName> = new Set([
  'Text',
  'RichText',
  'Certificate',
  'Email',
  'PhoneNumber',
  'LandlinePhone',
]);

const NUMERIC: ReadonlySet<FieldTypeName> = new Set(['Number', 'Currency', 'Rating']);

export interface CompileFieldInput {
  field: WorksheetField;
  type: FieldTypeName;
  mapping: FieldMapping;
  source: ZoneClock;
  target: ZoneClock;
}

/** The planned field, or undefined after reporting the problem through `problem`. */
export function compileField(
  { field, type, mapping: m, source, target }: CompileFieldInput,
  problem: (message: string) => void,
): PlannedField | undefined {
  const coercion = createFieldCoercion({ field, type, mapping: m, source, target });
  const isArray = ARRAY_VALUED_FIELD_TYPES.has(type);
  const blankIsEmpty = !TEXT_LIKE.has(type);
  const required = field.required === true;
  const numeric = NUMERIC.has(type);
  if (m.decimal !== undefined && !numeric) {
    problem(`decimal applies to Number, Currency and Rating fields; this field is ${type}`);
    return undefined;
  }
  const transform = createValueTransform(m, numeric);
  const precoerce = (raw: unknown, what: string): unknown => {
    if (isEmptyValue(raw, blankIsEmpty)) return undefined;
    const out = coercion.coerce(raw);
    if (out instanceof CoerceFailure) {
      problem(`${what} ${JSON.stringify(raw)} cannot be written: ${out.reason}`);
      return null;
    }
    return out;
  };

  let whenEmpty: unknown = isArray ? Object.freeze([]) : null;
  if (required)
    whenEmpty = new CoerceFailure(
      'required: the field must have a value (set `default` to fill empty cells)',
    );
  const coercedDefault = m.default === undefined ? undefined : precoerce(m.default, 'default');
  if (coercedDefault === null) return undefined;
  if (coercedDefault !== undefined) whenEmpty = coercedDefault;

  const hasConstant = m.from === undefined && m.value !== undefined;
  let constant: unknown = whenEmpty;
  if (hasConstant) {
    const coerced = precoerce(m.value, 'constant value');
    if (coerced === null) return undefined;
    if (coerced !== undefined) constant = coerced;
    else if (whenEmpty instanceof CoerceFailure) {
      problem('constant value is empty but the field is required');
      return undefined;
    }
  }

  // Each value of `map` is what some rows will hold: a bad one is one mapping error, not a dead letter per row.
  for (const [from, to] of Object.entries(m.map ?? {})) {
    if (precoerce(to, `map value for ${JSON.stringify(from)}:`) === null) return undefined;
  }

  const alias = field.alias !== undefined && field.alias !== '' ? field.alias : undefined;
  return {
    target: m.target,
    id: field.id,
    alias,
    name: field.name,
    type,
    required,
    column: m.from,
    isArray,
    blankIsEmpty,
    options: coercion.options,
    precision: field.precision,
    reference: coercion.reference,
    writeType: coercion.writeType,
    coerce: coercion.coerce,
    transform,
    hasConstant,
    constant,
    whenEmpty,
    mapping: m,
  };
}
