import { describe, expect, it } from 'vitest';
import type { EmulatorDeps } from '../../../../src/emulator/deps.ts';
import { EmulatorError } from '../../../../src/emulator/emulator-error.ts';
import { createIdGenerator } from '../../../../src/emulator/ids.ts';
import { resolveOptions } from '../../../../src/emulator/options.ts';
import { canonicalValue } from '../../../../src/emulator/rows/value-codec.ts';
import type { FieldInput, WriteScope } from '../../../../src/emulator/rows/value-codec.ts';
import { createEmptyState } from '../../../../src/emulator/state/create-state.ts';
import type { FieldRecord } from '../../../../src/emulator/state/records.ts';
import type { FieldTypeName } from '../../../../src/api/field-types.ts';
import { isReadOnlyFieldType } from '../../../../src/api/field-types.ts';

const deps: EmulatorDeps = {
  state: createEmptyState(),
  ids: createIdGenerator(),
  options: resolveOptions({ maxOptionsPerField: 3, maxAttachmentsPerField: 2 }),
};

function field(type: FieldTypeName, extra: Partial<FieldRecord> = {}): FieldRecord {
  return {
    id: '0123456789abcdef01234567',
    name: type,
    alias: type.toLowerCase(),
    type,
    required: false,
    isUnique: false,
    isTitle: false,
    isReadOnly: isReadOnlyFieldType(type),
    isHidden: false,
    options: [],
    dataSource: undefined,
    precision: undefined,
    subType: undefined,
    max: undefined,
    sourceField: '',
    relation: undefined,
    config: {},
    ...extra,
  };
}

function scope(): WriteScope {
  return { deps, pendingOptions: new Map() };
}

function write(f: FieldRecord, input: FieldInput, previous?: unknown, s = scope()): unknown {
  return canonicalValue(s, f, input, previous);
}

function code(fn: () => unknown): number | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof EmulatorError ? error.errorCode : -1;
  }
}

describe('emulator value codec: write formats of platform notes §4', () => {
  it('numbers from numbers or numeric strings', () => {
    expect(write(field('Number'), { value: '12.5' })).toBe(12.5);
    expect(write(field('Currency'), { value: -3 })).toBe(-3);
    expect(code(() => write(field('Number'), { value: '12,5' }))).toBe(10002);
    expect(code(() => write(field('Number'), { value: [1] }))).toBe(10002);
  });

  it('checkbox from booleans and 1/0; unchecked is empty', () => {
    expect(write(field('Checkbox'), { value: 1 })).toBe(true);
    expect(write(field('Checkbox'), { value: 'true' })).toBe(true);
    expect(write(field('Checkbox'), { value: '0' })).toBeUndefined();
    expect(code(() => write(field('Checkbox'), { value: 'yes' }))).toBe(10002);
  });

  it('dates, date-times and times in the platform formats, real calendar dates only', () => {
    expect(write(field('Date'), { value: '2024-02-29' })).toBe('2024-02-29');
    expect(code(() => write(field('Date'), { value: '2023-02-29' }))).toBe(10002);
    expect(write(field('DateTime'), { value: '2024-01-02 03:04' })).toBe('2024-01-02 03:04:00');
    expect(write(field('DateTime'), { value: '2024-01-02' })).toBe('2024-01-02 00:00:00');
    expect(code(() => write(field('DateTime'), { value: '2024-01-02T03:04:05Z' }))).toBe(10002);
    expect(write(field('Time'), { value: '09:30' })).toBe('09:30:00');
    expect(code(() => write(field('Time'), { value: '25:00' }))).toBe(10002);
  });

  it('option keys, with type "2" creating options only in the request scope', () => {
    const status = field('SingleSelect', {
      options: [
        { key: 'k-open', value: 'Open', index: 1, isDeleted: false },
        { key: 'k-old', value: 'Old', index: 2, isDeleted: true },
      ],
    });
    expect(write(status, { value: ['k-open'] })).toEqual(['k-open']);
    expect(write(status, { value: 'k-open' })).toEqual(['k-open']);
    expect(code(() => write(status, { value: ['k-old'] }))).toBe(10002);
    expect(code(() => write(status, { value: ['Open'] }))).toBe(10002);
    expect(write(status, { value: ['Open'], type: '2' })).toEqual(['k-open']);
    const s = scope();
    const [created] = write(status, { value: ['New'], type: '2' }, undefined, s) as string[];
    expect(s.pendingOptions.get(status.id)!.map((o) => [o.key, o.value])).toEqual([[created, 'New']]);
    expect(status.options).toHaveLength(2);
    // The same text again in the same request reuses the pending option.
    expect(write(status, { value: ['New'], type: '2' }, undefined, s)).toEqual([created]);
    // Limit 3 counts live options (Open) plus pending ones (New, Another); Old is deleted.
    expect(code(() => write(status, { value: ['Another'], type: '2' }, undefined, s))).toBeUndefined();
    expect(code(() => write(status, { value: ['Fourth'], type: '2' }, undefined, s))).toBe(100006);
  });

  it('members, departments and regions must exist', () => {
    expect(
      write(field('Collaborator'), { value: [{ accountId: 'a0000000-0000-4000-8000-000000000002' }] }),
    ).toEqual(['a0000000-0000-4000-8000-000000000002']);
    expect(code(() => write(field('Collaborator'), { value: ['ghost'] }))).toBe(10002);
    expect(write(field('Department'), { value: ['d0000000-0000-4000-8000-0000000000d2'] })).toEqual([
      'd0000000-0000-4000-8000-0000000000d2',
    ]);
    expect(write(field('Region'), { value: '310101' })).toBe('310101');
    expect(code(() => write(field('Region'), { value: '999999' }))).toBe(10002);
  });

  it('attachments replace or append within the limit', () => {
    const f = field('Attachment');
    const one = write(f, { value: [{ url: 'https://files.test/a/b.png' }] });
    expect(one).toEqual([{ name: 'b.png', url: 'https://files.test/a/b.png' }]);
    expect(write(f, { value: [{ name: 'c', url: 'u' }], type: '1' }, one)).toHaveLength(2);
    expect(write(f, { value: [{ name: 'c', url: 'u' }], type: '0' }, one)).toHaveLength(1);
    expect(code(() => write(f, { value: [{ url: 'x' }, { url: 'y' }], type: '1' }, one))).toBe(100007);
    expect(code(() => write(f, { value: ['not-an-object'] }))).toBe(10002);
  });

  it('clears with null, "" or []; refuses computed types', () => {
    expect(write(field('Text'), { value: null })).toBeUndefined();
    expect(write(field('MultipleSelect'), { value: [] })).toBeUndefined();
    for (const type of ['Formula', 'AutoNumber', 'Lookup', 'Rollup', 'Concatenate'] as const) {
      expect(
        code(() => write(field(type), { value: '1' })),
        type,
      ).toBe(10002);
    }
  });
});
