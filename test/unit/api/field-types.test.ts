import { describe, expect, it } from 'vitest';
import {
  FIELD_TYPE_CODES,
  fieldTypeCode,
  fieldTypeName,
  isReadOnlyFieldType,
} from '../../../src/api/field-types.ts';
import { operatorsFor } from '../../../src/api/filter-operators.ts';

describe('field types', () => {
  it('resolves names, numeric codes and code strings to one name', () => {
    expect(fieldTypeName('Text')).toBe('Text');
    expect(fieldTypeName(2)).toBe('Text');
    expect(fieldTypeName('11')).toBe('Dropdown');
    expect(fieldTypeName('24')).toBe('Region');
    expect(fieldTypeName('Nope')).toBeUndefined();
    // platform-shapes §4 [C]: any code outside the table is a custom field.
    expect(fieldTypeName('999')).toBe('CustomField');
    expect(fieldTypeName(49)).toBe('Button');
    expect(fieldTypeName(10010)).toBe('RichText');
    expect(fieldTypeName(2.5)).toBeUndefined();
  });

  it('maps every name back to a code that resolves to it', () => {
    for (const name of new Set(Object.values(FIELD_TYPE_CODES))) {
      expect(fieldTypeName(fieldTypeCode(name))).toBe(name);
    }
    expect(fieldTypeCode('DateRange')).toBe(17);
  });

  it('knows the computed types are read-only', () => {
    expect(isReadOnlyFieldType('Formula')).toBe(true);
    expect(isReadOnlyFieldType('Text')).toBe(false);
  });

  it('gives each family its own operators', () => {
    expect(operatorsFor('Number')).toContain('ge');
    expect(operatorsFor('Number')).not.toContain('gte');
    expect(operatorsFor('Text')).toContain('startswith');
    expect(operatorsFor('Text')).not.toContain('gt');
    expect(operatorsFor('Department')).toContain('belongsto');
    expect(operatorsFor('Attachment')).toEqual(['isempty', 'isnotempty']);
  });
});
