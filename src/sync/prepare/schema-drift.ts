/**
 * Schema drift: the worksheet changed under a job since its last successful run. A
 * mapped field deleted or retyped, an option the mapping could write deleted, or a new
 * required field the mapping does not fill would each fail rows one by one (or blank a
 * column); the run fails before its first write instead, naming the field and what
 * changed, as the platform's own Data Integration flags "field deleted" and "mapping no
 * longer valid". Editing the job's mapping is how a person says "reviewed": drift is
 * judged only while the mapping is the one that last succeeded.
 */
import { createHash } from 'node:crypto';
import { fieldTypeName } from '../../api/field-types.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { WorksheetField, WorksheetStructure } from '../../api/types.ts';
import type { RedisClient } from '../state/redis-types.ts';
import { stateKey } from '../state/redis-types.ts';
import type { FieldMapping } from '../model/types.ts';

/** The code of {@link SchemaDriftError}: notifications tell `schema-drift` by it. */
export const SCHEMA_DRIFT_CODE = 'ROWBRIDGE_SCHEMA_DRIFT';

/** Drift stopped the run before its first write: a config error (fixing it is a person's move). */
export class SchemaDriftError extends ConfigError {
  override name = 'SchemaDriftError';
  override readonly code: string = SCHEMA_DRIFT_CODE;
}

/** What is kept of a structure: enough to tell what changed, nothing else. */
export interface StructureSnapshot {
  worksheetId: string;
  /** The job's mapping at that run: a mapping edited since is taken as reviewed against today's structure. */
  mappingHash: string;
  fields: Array<{
    id: string;
    name: string;
    alias: string;
    type: string;
    required: boolean;
    options: Array<{ key: string; value: string }>;
  }>;
}

/** A stable hash of a job's mapping. */
export function mappingHashOf(mappings: readonly FieldMapping[]): string {
  return createHash('sha1').update(JSON.stringify(mappings)).digest('hex').slice(0, 16);
}

export function snapshotOf(
  structure: WorksheetStructure,
  mappings: readonly FieldMapping[],
): StructureSnapshot {
  return {
    worksheetId: structure.id,
    mappingHash: mappingHashOf(mappings),
    fields: structure.fields.map((f) => ({
      id: f.id,
      name: f.name,
      alias: f.alias ?? '',
      type: fieldTypeName(f.type) ?? f.type,
      required: f.required === true,
      options: (f.options ?? [])
        .filter((o) => o.isDeleted !== true)
        .map((o) => ({ key: o.key, value: o.value })),
    })),
  };
}

function mappedField<F extends { id: string; alias?: string | undefined }>(
  fields: readonly F[],
  target: string,
): F | undefined {
  return fields.find(
    (f) => f.id === target || (f.alias !== undefined && f.alias !== '' && f.alias === target),
  );
}

/**
 * The drift between the structure of the last successful run and today's, for this
 * mapping: one message per problem, each naming the field. Empty when nothing matters.
 */
export function structureDrift(
  before: StructureSnapshot,
  now: WorksheetStructure,
  mappings: readonly FieldMapping[],
  creates: boolean,
): string[] {
  if (before.worksheetId !== now.id || before.mappingHash !== mappingHashOf(mappings)) return [];
  const problems: string[] = [];
  const byId = new Map<string, WorksheetField>(now.fields.map((f) => [f.id, f]));
  const mappedIds = new Set<string>();
  for (const m of mappings) {
    // The mapping names fields by id or alias; the snapshot keeps ids (aliases can change).
    const current = mappedField(now.fields, m.target);
    const old =
      current === undefined
        ? mappedField(before.fields, m.target)
        : before.fields.find((f) => f.id === current.id);
    if (current !== undefined) mappedIds.add(current.id);
    if (old === undefined) continue;
    const field = byId.get(old.id);
    if (field === undefined) {
      problems.push(
        `${m.target}: field "${old.name}" (${old.id}) was deleted from the worksheet since the last successful run`,
      );
      continue;
    }
    const type = fieldTypeName(field.type) ?? field.type;
    if (type !== old.type)
      problems.push(
        `${m.target}: field "${field.name}" changed type from ${old.type} to ${type} since the last successful run`,
      );
    if (m.createOptions === true) continue;
    const live = new Set((field.options ?? []).filter((o) => o.isDeleted !== true).map((o) => o.key));
    const gone = old.options.filter((o) => !live.has(o.key));
    if (gone.length > 0) {
      problems.push(
        `${m.target}: option${gone.length === 1 ? '' : 's'} ${gone.map((o) => `"${o.value}"`).join(', ')} of field "${field.name}" ${gone.length === 1 ? 'was' : 'were'} deleted since the last successful run; rows that still use ${gone.length === 1 ? 'it' : 'them'} would be refused (restore the option, or set createOptions)`,
      );
    }
  }
  if (creates) {
    const known = new Set(before.fields.map((f) => f.id));
    for (const field of now.fields) {
      if (field.required === true && !known.has(field.id) && !mappedIds.has(field.id)) {
        problems.push(
          `${field.alias || field.id}: field "${field.name}" is new and required since the last successful run, and the mapping does not fill it`,
        );
      }
    }
  }
  return problems;
}

/** The snapshot of each job's last successful run, in Redis under the state prefix. */
export function createStructureSnapshots(deps: { redis: RedisClient; prefix: string }) {
  const key = (job: string) => stateKey(deps.prefix, 'structure', job);
  return {
    async get(job: string): Promise<StructureSnapshot | undefined> {
      const raw = await deps.redis.get(key(job));
      return raw === null ? undefined : (JSON.parse(raw) as StructureSnapshot);
    },
    async save(job: string, structure: WorksheetStructure, mappings: readonly FieldMapping[]): Promise<void> {
      await deps.redis.set(key(job), JSON.stringify(snapshotOf(structure, mappings)));
    },
  };
}
