/**
 * Maps one source record to the platform's field values. The hot path of every import:
 * no regex is compiled, no option list scanned and no plugin set up here; all of that
 * happened in validateMapping.
 */
import { hash } from 'node:crypto';
import type { FieldValue } from '../../api/types.ts';
import type { SourcePosition } from '../model/types.ts';
import { canonicalValue } from './canonical-value.ts';
import { composeKey } from './compose-key.ts';
import { CoerceFailure, describeValue, PendingReference, TypedValue } from './coerce-result.ts';
import { isEmptyValue } from './is-empty-value.ts';
import type { MappedRow, MapResult, PendingLookup, RowError } from './map-result.ts';
import type { MappingPlan, PlannedField } from './plan-types.ts';

export interface MapContext {
  /** Copied into the result so a dead letter can point at the record. */
  position?: SourcePosition;
}

const SET_LIKE = new Set([
  'SingleSelect',
  'Dropdown',
  'MultipleSelect',
  'Collaborator',
  'Department',
  'Relation',
]);

function rowError(f: PlannedField, raw: unknown, reason: string): RowError {
  return {
    field: f.target,
    column: f.column,
    value: raw === undefined || raw === null ? '' : describeValue(raw),
    reason,
  };
}

/**
 * Hash input: the plan fingerprint (which covers the sorted field ids and types) and one
 * JSON array of the values in field-id order, set-like arrays sorted so source order
 * does not count. One stringify per row: per-field concatenation cost twice as much.
 */
function contentHash(plan: MappingPlan, fields: readonly FieldValue[]): string {
  const order = plan.hashOrder;
  const values: unknown[] = new Array<unknown>(order.length);
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    const fv = fields[i] as FieldValue;
    let value = fv.value;
    if (Array.isArray(value) && value.length > 1 && SET_LIKE.has((plan.fields[i] as PlannedField).type)) {
      value = [...(value as string[])].sort();
    }
    values[k] = fv.type === undefined ? value : { type: fv.type, value };
  }
  // 6 bytes of SHA-1: a changed row passes for unchanged once in 2^48, and the compact
  // key index keeps the hash in 6 bytes (state/index-entry-codec.ts).
  return hash('sha1', plan.fingerprint + JSON.stringify(values), 'buffer')
    .subarray(0, 6)
    .toString('base64url');
}

/** Coerces every mapped field of `data`; any field that fails rejects the row with all its reasons. */
export function mapRecord(
  plan: MappingPlan,
  data: Readonly<Record<string, unknown>>,
  ctx?: MapContext,
): MapResult {
  const count = plan.fields.length;
  const fields: FieldValue[] = new Array<FieldValue>(count);
  let errors: RowError[] | undefined;
  let pending: PendingLookup[] | undefined;

  for (let i = 0; i < count; i++) {
    const f = plan.fields[i] as PlannedField;
    let raw: unknown;
    let value: unknown;
    if (f.hasConstant) {
      raw = f.mapping.value;
      value = f.constant;
    } else {
      raw = f.column !== undefined && Object.hasOwn(data, f.column) ? data[f.column] : undefined;
      const input = f.transform === undefined ? raw : f.transform(raw);
      value = isEmptyValue(input, f.blankIsEmpty)
        ? f.whenEmpty
        : input instanceof CoerceFailure
          ? input
          : f.coerce(input);
    }
    let type = f.writeType;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      if (value instanceof CoerceFailure) {
        (errors ??= []).push(rowError(f, raw, value.reason));
        continue;
      }
      if (value instanceof TypedValue) {
        type = value.type;
        value = value.value;
      } else if (value instanceof PendingReference) {
        (pending ??= []).push({ index: i, values: value.values });
        value = value.values;
      }
    }
    fields[i] = type === undefined ? { id: f.id, value } : { id: f.id, value, type };
  }

  let key: string | undefined;
  // A key field that failed coercion already has its error; an empty one gets its own.
  const parts: string[] = [];
  for (const index of plan.keyIndexes) {
    const keyValue = fields[index];
    if (keyValue === undefined) continue;
    const f = plan.fields[index] as PlannedField;
    const value = keyValue.value;
    if (value === null || value === '' || (Array.isArray(value) && value.length === 0)) {
      const what = plan.keyIndexes.length === 1 ? 'the key field is empty' : `key part ${f.target} is empty`;
      (errors ??= []).push(
        rowError(f, undefined, `${what}: every record needs a key to be matched to a row`),
      );
    } else parts.push(canonicalValue(f, value, plan.targetClock));
  }
  if (errors === undefined && parts.length === plan.keyIndexes.length) key = composeKey(parts);

  if (errors !== undefined) {
    return ctx?.position === undefined
      ? { ok: false, category: 'invalid-row', errors }
      : { ok: false, category: 'invalid-row', errors, position: ctx.position };
  }
  // Only the key index reads the hash, and only a plan with a key has one: an append
  // without a key skips it (about a tenth of a 1M-row import's CPU, bench/import.ts).
  const rowHash = plan.keyIndexes.length === 0 ? '' : contentHash(plan, fields);
  const result: MappedRow = { ok: true, fields, hash: rowHash };
  if (key !== undefined) result.key = key;
  if (pending !== undefined) result.pending = pending;
  if (ctx?.position !== undefined) result.position = ctx.position;
  return result;
}
