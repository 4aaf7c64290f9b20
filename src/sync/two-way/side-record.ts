/**
 * A record of either side in the form a two-way plan compares: each field's value in
 * comparison form (two-way-fields.ts) and its hash, and the match key (the `key` fields'
 * values joined; '' when one is empty).
 */
import type { ZoneClock } from '../../api/zone-clock.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { MakeRecord } from './read-sides.ts';
import { comparable, valueHash } from './two-way-fields.ts';
import type { TwoWayField } from './two-way-fields.ts';
import type { SideRecord } from './two-way-plan-types.ts';

/** Builds records of the job's fields; the worksheet's date-times are read in `orgClock`. */
export function createRecordMaker(deps: {
  spec: JobSpec;
  fields: readonly TwoWayField[];
  keyTargets: readonly string[];
  orgClock: ZoneClock;
}): MakeRecord {
  const { spec, fields, keyTargets, orgClock } = deps;
  const constants = new Map(spec.mappings.map((m) => [m.target, m.value]));
  return (id, values, side, at) => {
    const c: Record<string, string> = {};
    const h: Record<string, string> = {};
    for (const f of fields) {
      const raw =
        side === 'worksheet'
          ? values[f.fieldId]
          : f.column === undefined
            ? constants.get(f.target)
            : values[f.column];
      c[f.target] = comparable(f.type, raw, side === 'worksheet' ? orgClock : f.sourceZone);
      h[f.target] = valueHash(c[f.target]!);
    }
    const parts = keyTargets.map((t) => (c[t] ?? '').trim());
    const r: SideRecord = {
      id,
      values,
      comparable: c,
      hashes: h,
      matchKey: parts.includes('') ? '' : parts.join('\u001f'),
    };
    if (at !== undefined) r.updatedAt = at;
    return r;
  };
}

/** The match key alone of a record's values (key fields only need be present): what a key scan gives. */
export function createMatchKeyOf(deps: {
  fields: readonly TwoWayField[];
  keyTargets: readonly string[];
  orgClock: ZoneClock;
}): (values: Record<string, unknown>, side: 'source' | 'worksheet') => string {
  const keyFields = deps.keyTargets.map((t) => deps.fields.find((f) => f.target === t));
  return (values, side) => {
    const parts = keyFields.map((f) => {
      if (f === undefined) return '';
      const raw =
        side === 'worksheet' ? values[f.fieldId] : f.column === undefined ? undefined : values[f.column];
      return comparable(f.type, raw, side === 'worksheet' ? deps.orgClock : f.sourceZone).trim();
    });
    return parts.includes('') ? '' : parts.join('\u001f');
  };
}
