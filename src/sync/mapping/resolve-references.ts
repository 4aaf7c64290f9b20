/**
 * Second, async phase of mapping: members, departments and related rows are looked up
 * for a whole batch at once, each distinct value at most once per batch (and not at all
 * when the caller's cache already knows it). A value nobody finds rejects its row with
 * the reason; a failing lookup (network, permission) is not a row problem and rejects
 * the returned promise so the run's retry policy handles it.
 */
import type { FieldValue } from '../../api/types.ts';
import { describeValue } from './coerce-result.ts';
import type { MappedRow, MapResult, RowError } from './map-result.ts';
import type { MappingPlan, PlannedField, ReferenceSpec } from './plan-types.ts';
import type { ReferenceCache } from './reference-cache.ts';

/** Lookup functions; each returns a Map keyed by the values it was given. */
export interface ReferenceLookups {
  /** Members by name or (lower-cased) email → accountId. */
  lookupMembers(by: 'name' | 'email', values: string[]): Promise<Map<string, string>>;
  /** Rows of `worksheetId` whose `keyField` equals a value → row id. */
  lookupRelations(worksheetId: string, keyField: string, values: string[]): Promise<Map<string, string>>;
  /** Departments by name → department id; needed only when a mapping says `lookupBy: name` for a Department field. */
  lookupDepartments?(values: string[]): Promise<Map<string, string>>;
  /** Kept by the caller across batches; without it, each call starts empty. */
  cache?: ReferenceCache;
}

function scopeOf(spec: ReferenceSpec): string {
  switch (spec.kind) {
    case 'member':
      return `member:${spec.by}`;
    case 'department':
      return 'department:name';
    case 'relation':
      return `relation:${spec.worksheetId}:${spec.keyField}`;
  }
}

function notFound(spec: ReferenceSpec, value: string): string {
  switch (spec.kind) {
    case 'member':
      return `no organisation member with ${spec.by} "${value}"`;
    case 'department':
      return `no department named "${value}"`;
    case 'relation':
      return `no row in related worksheet ${spec.worksheetId} with ${spec.keyField} = "${value}"`;
  }
}

interface Scope {
  spec: ReferenceSpec;
  missing: Set<string>;
  found: Map<string, string>;
}

async function lookup(
  spec: ReferenceSpec,
  values: string[],
  deps: ReferenceLookups,
): Promise<Map<string, string>> {
  switch (spec.kind) {
    case 'member': {
      const found = await deps.lookupMembers(spec.by, values);
      if (spec.by !== 'email') return found;
      // Inputs are lower-cased; a lookup that answers with the directory's casing still matches.
      return new Map([...found].map(([k, v]) => [k.toLowerCase(), v]));
    }
    case 'department':
      if (deps.lookupDepartments === undefined) return new Map();
      return deps.lookupDepartments(values);
    case 'relation':
      return deps.lookupRelations(spec.worksheetId, spec.keyField, values);
  }
}

/** Replaces lookup inputs with ids in every mapped row of the batch; rows with unresolved values become rejected rows. */
export async function resolveReferences(
  plan: MappingPlan,
  results: readonly MapResult[],
  deps: ReferenceLookups,
): Promise<MapResult[]> {
  const scopes = new Map<string, Scope>();
  const fieldAt = (index: number): PlannedField & { reference: ReferenceSpec } => {
    const field = plan.fields[index];
    if (field?.reference === undefined) throw new Error(`plan field ${index} has no reference to resolve`);
    return field as PlannedField & { reference: ReferenceSpec };
  };

  for (const result of results) {
    if (!result.ok || result.pending === undefined) continue;
    for (const entry of result.pending) {
      const spec = fieldAt(entry.index).reference;
      const name = scopeOf(spec);
      let scope = scopes.get(name);
      if (scope === undefined) scopes.set(name, (scope = { spec, missing: new Set(), found: new Map() }));
      for (const value of entry.values) {
        if (deps.cache?.get(name, value) === undefined) scope.missing.add(value);
      }
    }
  }

  await Promise.all(
    [...scopes].map(async ([name, scope]) => {
      if (scope.missing.size === 0) return;
      if (scope.spec.kind === 'department' && deps.lookupDepartments === undefined) return;
      const found = await lookup(scope.spec, [...scope.missing], deps);
      for (const value of scope.missing) {
        const id = found.get(value);
        if (id === undefined) continue;
        scope.found.set(value, id);
        deps.cache?.set(name, value, id);
      }
    }),
  );

  return results.map((result) => {
    if (!result.ok || result.pending === undefined) return result;
    const fields: FieldValue[] = [...result.fields];
    const errors: RowError[] = [];
    for (const entry of result.pending) {
      const field = fieldAt(entry.index);
      const name = scopeOf(field.reference);
      const found = scopes.get(name)?.found;
      const ids: string[] = [];
      const missing: string[] = [];
      for (const value of entry.values) {
        const id = found?.get(value) ?? deps.cache?.get(name, value);
        if (id === undefined) missing.push(value);
        else if (!ids.includes(id)) ids.push(id);
      }
      if (missing.length > 0) {
        const reason =
          field.reference.kind === 'department' && deps.lookupDepartments === undefined
            ? 'departments by name need a department lookup, and none is configured'
            : missing.map((value) => notFound(field.reference, value)).join('; ');
        errors.push({
          field: field.target,
          column: field.column,
          value: describeValue(missing.join(', ')),
          reason,
        });
        continue;
      }
      const current = fields[entry.index];
      if (current !== undefined) fields[entry.index] = { ...current, value: ids };
    }
    if (errors.length > 0) {
      return result.position === undefined
        ? { ok: false, category: 'invalid-row', errors }
        : { ok: false, category: 'invalid-row', errors, position: result.position };
    }
    const resolved: MappedRow = { ok: true, fields, hash: result.hash };
    if (result.key !== undefined) resolved.key = result.key;
    if (result.position !== undefined) resolved.position = result.position;
    return resolved;
  });
}
