/**
 * Checks a job's field mapping against the worksheet structure before any write and
 * compiles it into a MappingPlan. Every problem is collected, then all are thrown at
 * once in one MappingError.
 */
import { createHash } from 'node:crypto';
import { type FieldTypeName, fieldTypeName, READ_ONLY_FIELD_TYPES } from '../../api/field-types.ts';
import type { WorksheetField, WorksheetStructure } from '../../api/types.ts';
import type { FieldMapping } from '../model/types.ts';
import { compileField, TEXT_LIKE } from './compile-field.ts';
import { isWritableFieldType, WRITABLE_FIELD_TYPES } from './create-coercer.ts';
import { fieldOptionProblems } from './field-option-problems.ts';
import { MappingError, type MappingProblem } from './mapping-error.ts';
import type { MappingPlan, PlannedField, ValidateMappingOptions } from './plan-types.ts';
import { suggestField } from './suggest-field.ts';
import { createZoneClock, type ZoneClock } from '../../api/zone-clock.ts';

const KEY_TYPES: ReadonlySet<FieldTypeName> = new Set([
  ...TEXT_LIKE,
  'Number',
  'Currency',
  'Date',
  'DateTime',
  'Time',
  'Region',
]);
const CREATING_MODES: ReadonlySet<string> = new Set(['append', 'upsert', 'mirror']);

function refOf(field: WorksheetField): string {
  return field.alias !== undefined && field.alias !== '' ? field.alias : field.id;
}

function isReadOnly(field: WorksheetField, type: FieldTypeName): boolean {
  return field.isReadOnly === true || READ_ONLY_FIELD_TYPES.has(type);
}

/**
 * Validates `mappings` against `structure` and compiles the plan.
 * @throws MappingError listing every problem found.
 */
export function validateMapping(
  mappings: readonly FieldMapping[],
  structure: WorksheetStructure,
  opts: ValidateMappingOptions,
): MappingPlan {
  const problems: MappingProblem[] = [];
  const byRef = new Map<string, WorksheetField>();
  for (const field of structure.fields) {
    byRef.set(field.id, field);
    if (field.alias !== undefined && field.alias !== '' && !byRef.has(field.alias))
      byRef.set(field.alias, field);
  }

  let target: ZoneClock = createZoneClock('UTC');
  if (opts.targetTimezone !== undefined) {
    try {
      target = createZoneClock(opts.targetTimezone);
    } catch {
      problems.push({
        target: '(targetTimezone)',
        message: `unknown time zone "${opts.targetTimezone}": use an IANA name like Europe/Berlin`,
      });
    }
  }

  const planned: PlannedField[] = [];
  const mappedBy = new Map<string, string>(); // field id → target that maps it
  for (const m of mappings) {
    const problem = (message: string): void => {
      problems.push({ target: m.target, message });
    };
    const field = byRef.get(m.target);
    if (field === undefined) {
      const hint = suggestField(m.target, structure.fields);
      problem(
        `no field with this id or alias in worksheet ${structure.name}${hint === undefined ? '' : `; ${hint}`}`,
      );
      continue;
    }
    const earlier = mappedBy.get(field.id);
    if (earlier !== undefined) {
      problem(`field "${field.name}" is already mapped by "${earlier}"; map each field once`);
      continue;
    }
    mappedBy.set(field.id, m.target);
    const type = fieldTypeName(field.type);
    if (type === undefined) {
      problem(`field "${field.name}" has type "${field.type}", which rowbridge does not know`);
      continue;
    }
    if (isReadOnly(field, type)) {
      problem(
        `field "${field.name}" is read-only (${type}): the platform computes it; remove it from the mapping`,
      );
      continue;
    }
    if (!isWritableFieldType(type)) {
      problem(
        `field "${field.name}" has type ${type}, which rowbridge cannot write; supported: ${WRITABLE_FIELD_TYPES.join(', ')}`,
      );
      continue;
    }
    const optionIssues = fieldOptionProblems(m, field, type);
    let source: ZoneClock = createZoneClock('UTC');
    if (m.timezone !== undefined) {
      try {
        source = createZoneClock(m.timezone);
      } catch {
        optionIssues.push(`unknown time zone "${m.timezone}": use an IANA name like Europe/Berlin`);
      }
    }
    if (optionIssues.length > 0) {
      for (const message of optionIssues) problem(message);
      continue;
    }
    const built = compileField({ field, type, mapping: m, source, target }, problem);
    if (built !== undefined) planned.push(built);
  }

  if (CREATING_MODES.has(opts.mode)) {
    for (const field of structure.fields) {
      const type = fieldTypeName(field.type);
      if (
        field.required !== true ||
        mappedBy.has(field.id) ||
        (type !== undefined && isReadOnly(field, type))
      )
        continue;
      problems.push({
        target: refOf(field),
        message: `required field "${field.name}" has no mapping; mode ${opts.mode} creates rows, so map it (from, value or default)`,
      });
    }
  }

  const keyIndexes = resolveKeys(opts, structure, byRef, mappedBy, planned, problems);

  if (problems.length > 0)
    throw new MappingError(problems, { worksheet: structure.name, jobFile: opts.jobFile });

  const byTarget = new Map<string, PlannedField>();
  for (const f of planned) {
    byTarget.set(f.id, f);
    if (f.alias !== undefined) byTarget.set(f.alias, f);
  }
  const hashOrder = planned
    .map((_, i) => i)
    .sort((a, b) => compareIds(planned[a]?.id ?? '', planned[b]?.id ?? ''));
  return {
    worksheetId: structure.id,
    worksheetName: structure.name,
    mode: opts.mode,
    fields: planned,
    hashOrder,
    keyIndex: keyIndexes[0],
    keyIndexes,
    byTarget,
    targetClock: target,
    fingerprint: fingerprintOf(planned, hashOrder, target.zone),
  };
}

/** The key fields' indexes into `planned`: one, several (a composite key) or none. */
function resolveKeys(
  opts: ValidateMappingOptions,
  structure: WorksheetStructure,
  byRef: ReadonlyMap<string, WorksheetField>,
  mappedBy: ReadonlyMap<string, string>,
  planned: readonly PlannedField[],
  problems: MappingProblem[],
): number[] {
  const names = opts.key === undefined ? [] : typeof opts.key === 'string' ? [opts.key] : [...opts.key];
  if (names.length === 0 || names.some((n) => n === '')) {
    if (opts.mode !== 'append') {
      problems.push({
        target: '(key)',
        message: `mode ${opts.mode} matches source records to rows, so it needs a key field (a mapped field id or alias)`,
      });
    }
    return [];
  }
  const indexes: number[] = [];
  for (const name of names) {
    const index = resolveKey(name, structure, byRef, mappedBy, planned, problems, opts.relationKeys);
    if (index === undefined) continue;
    if (indexes.includes(index))
      problems.push({
        target: name,
        message: 'names a key field twice: each part of a composite key is a different field',
      });
    else indexes.push(index);
  }
  return indexes.length === names.length ? indexes : [];
}

function resolveKey(
  key: string,
  structure: WorksheetStructure,
  byRef: ReadonlyMap<string, WorksheetField>,
  mappedBy: ReadonlyMap<string, string>,
  planned: readonly PlannedField[],
  problems: MappingProblem[],
  relationKeys = false,
): number | undefined {
  const opts = { key };
  const field = byRef.get(opts.key);
  if (field === undefined) {
    const hint = suggestField(opts.key, structure.fields);
    problems.push({
      target: opts.key,
      message: `key field is not in worksheet ${structure.name}${hint === undefined ? '' : `; ${hint}`}`,
    });
    return undefined;
  }
  if (!mappedBy.has(field.id)) {
    problems.push({
      target: opts.key,
      message: `key field "${field.name}" is not in the mapping; map it so records can be matched to rows`,
    });
    return undefined;
  }
  const index = planned.findIndex((f) => f.id === field.id);
  const type = planned[index]?.type;
  if (type !== undefined && !KEY_TYPES.has(type) && !(relationKeys && type === 'Relation')) {
    problems.push({
      target: opts.key,
      message: `a ${type} field cannot be the key; use a text, number, date, time or region field`,
    });
  }
  return index === -1 ? undefined : index;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function fingerprintOf(fields: readonly PlannedField[], order: readonly number[], zone: string): string {
  const parts = order.map((i) => {
    const f = fields[i];
    if (f === undefined) return null;
    const { from, value, format, timezone, createOptions, relationKey, lookupBy, lookupTable } = f.mapping;
    const { trim, map, trueValues, falseValues, decimal } = f.mapping;
    // Only when set: the fingerprints of mappings without transforms stay as they were.
    const transforms =
      f.transform === undefined && decimal === undefined
        ? []
        : [{ trim, map, trueValues, falseValues, decimal }];
    return [
      f.id,
      f.type,
      from ?? null,
      value ?? null,
      format ?? null,
      timezone ?? null,
      createOptions ?? false,
      relationKey ?? null,
      lookupBy ?? null,
      lookupTable ?? null,
      ...transforms,
    ];
  });
  return createHash('sha1')
    .update(JSON.stringify([zone, parts]))
    .digest('hex')
    .slice(0, 16);
}
