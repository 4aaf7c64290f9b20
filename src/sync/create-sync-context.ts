import type { PlatformClient } from '../api/create-platform-client.ts';
import { normaliseRow } from '../api/rows/normalise-row.ts';
import { iterateRows } from '../api/rows/iterate-rows.ts';
import { ConfigError } from '../api/errors.ts';
import type { Filter, WorksheetStructure } from '../api/types.ts';
import type { Logger } from '../ops/logger.ts';
import type { JobSpec } from './job-spec/job-spec-schema.ts';
import { groupChangeSets } from './mapping/group-change-sets.ts';
import type { MappingPlan } from './mapping/plan-types.ts';
import { createReferenceCache } from './mapping/reference-cache.ts';
import { resolveReferences } from './mapping/resolve-references.ts';
import type { ReferenceLookups } from './mapping/resolve-references.ts';
import { keyOfRow, rowMatches } from './mapping/row-matches.ts';
import { validateMapping } from './mapping/validate-mapping.ts';
import type { DeadLetterStore } from './state/dead-letter-store.ts';
import { createKeyIndex } from './state/key-index.ts';
import type { RedisClient } from './state/redis-types.ts';
import type { RunStore } from './state/run-store.ts';
import type { SyncContext } from './sync-context.ts';
import type { NormalisedRow } from './types.ts';
import type { Failure } from './write-batch.ts';

/** What the sync engine is given by whoever composes it (the queue worker, the CLI). */
export interface SyncDeps {
  /** Client of the application the job writes to. */
  client: PlatformClient;
  redis: RedisClient;
  /** Key prefix of rowbridge state. */
  prefix: string;
  runs: RunStore;
  deadLetters: DeadLetterStore;
  log: Logger;
}

/** A filter matching rows whose `field` equals any of `values` (text and number keys take `eq`). */
export function anyOf(field: string, values: readonly string[]): Filter {
  return {
    type: 'group',
    logic: 'OR',
    children: values.map((value) => ({ type: 'condition', field, operator: 'eq', value })),
  };
}

const LOOKUP_CHUNK = 100;

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** Resolves the target worksheet and compiles the mapping: the checks made before any write. */
export async function planJob(
  spec: JobSpec,
  client: PlatformClient,
  file?: string,
): Promise<{ structure: WorksheetStructure; plan: MappingPlan }> {
  const target = spec.target;
  if (target === undefined) throw new ConfigError(`job ${spec.name} has no target worksheet (it is a pull job with a sink)`);
  const structure = await client.worksheets.get(target.worksheet);
  // options.createMissingOptions is the job-wide default of each mapping's createOptions.
  const mappings = spec.options.createMissingOptions
    ? spec.mappings.map((m) => ({ createOptions: true, ...m }))
    : spec.mappings;
  const plan = validateMapping(mappings, structure, { mode: target.mode, key: target.key, jobFile: file });
  return { structure, plan };
}

/** Builds the context batches of one run are written with. */
export function createSyncContext(
  spec: JobSpec,
  prepared: { structure: WorksheetStructure; plan: MappingPlan },
  run: { runId: string; attempt: number },
  deps: SyncDeps,
): SyncContext {
  const target = spec.target!;
  const { structure, plan } = prepared;
  const worksheetId = structure.id;
  const rows = deps.client.rows;
  const keyField = plan.keyIndex === undefined ? undefined : plan.fields[plan.keyIndex];
  const normalise = (row: Parameters<typeof normaliseRow>[0]) => normaliseRow(row, structure);
  const cache = createReferenceCache();
  let members: Promise<Array<Record<string, unknown>>> | undefined;

  async function listMatching(worksheet: string, filter: Filter, fields?: string[]) {
    const out: NormalisedRow[] = [];
    for await (const row of iterateRows((body) => rows.list(worksheet, body), {
      filter,
      ...(fields === undefined ? {} : { fields }),
    })) {
      out.push(worksheet === worksheetId ? normalise(row) : normaliseRow(row));
    }
    return out;
  }

  const lookups: ReferenceLookups = {
    cache,
    async lookupMembers(by, values) {
      // The member directory is small next to a run: read it once per run and match locally.
      members ??= deps.client.lookups.users({}).then((data) => memberList(data));
      const list = await members;
      const wanted = new Set(values);
      const found = new Map<string, string>();
      for (const m of list) {
        const probe = by === 'email' ? text(m.email).toLowerCase() : text(m.fullname ?? m.name);
        if (wanted.has(probe) && typeof m.accountId === 'string') found.set(probe, m.accountId);
      }
      return found;
    },
    async lookupRelations(relatedWorksheet, relatedKey, values) {
      const found = new Map<string, string>();
      for (const part of chunks(values, LOOKUP_CHUNK)) {
        for (const row of await listMatching(relatedWorksheet, anyOf(relatedKey, part))) {
          const value = row.values[relatedKey];
          if (value !== undefined && value !== null) found.set(text(value), row.id);
        }
      }
      return found;
    },
  };

  return {
    runId: run.runId,
    job: spec.name,
    attempt: run.attempt,
    mode: target.mode,
    worksheetId,
    triggerWorkflow: target.triggerWorkflow,
    batchSize: target.batchSize,
    plan,
    rows,
    index: target.mode === 'append' ? undefined : createKeyIndex({ redis: deps.redis, prefix: deps.prefix, job: spec.name }),
    runs: deps.runs,
    deadLetters: deps.deadLetters,
    log: deps.log,
    async resolveReferences(batch) {
      const failures = new Map<number, Failure>();
      if (!batch.some((r) => r.mapped.pending !== undefined)) return failures;
      const resolved = await resolveReferences(plan, batch.map((r) => r.mapped), lookups);
      batch.forEach((row, i) => {
        const result = resolved[i]!;
        if (result.ok) row.mapped = result;
        else {
          failures.set(row.index, {
            message: result.errors.map((e) => `${e.field}: ${e.reason}`).join('; '),
            ...(result.errors[0] === undefined ? {} : { field: result.errors[0].field }),
          });
        }
      });
      return failures;
    },
    async lookupKeys(keys) {
      const found = new Map<string, string>();
      if (keyField === undefined) return found;
      for (const part of chunks([...new Set(keys)], LOOKUP_CHUNK)) {
        for (const row of await listMatching(worksheetId, anyOf(keyField.id, part), [keyField.id])) {
          const key = keyOfRow(plan, row);
          if (key !== undefined && !found.has(key)) found.set(key, row.id);
        }
      }
      return found;
    },
    async fetchRows(rowIds) {
      const found = new Map<string, NormalisedRow>();
      for (const part of chunks(rowIds, 1000)) {
        const filter: Filter = { type: 'condition', field: 'rowid', operator: 'in', value: part };
        for (const row of await listMatching(worksheetId, filter)) found.set(row.id, row);
      }
      return found;
    },
    compare: (fields, existing) => rowMatches(plan, fields, existing),
    groupChangeSets,
  };
}

/** Key → row id of every worksheet row, reading only the key field (for the index). */
export async function* readWorksheetKeys(
  client: PlatformClient,
  structure: WorksheetStructure,
  plan: MappingPlan,
): AsyncGenerator<{ key: string; rowId: string }> {
  const keyField = plan.keyIndex === undefined ? undefined : plan.fields[plan.keyIndex];
  if (keyField === undefined) return;
  for await (const row of iterateRows((body) => client.rows.list(structure.id, body), { fields: [keyField.id] })) {
    const normalised = normaliseRow(row, structure);
    const key = keyOfRow(plan, normalised);
    if (key !== undefined) yield { key, rowId: normalised.id };
  }
}

/** A scalar as text; objects and arrays as JSON (never "[object Object]"). */
function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

function memberList(data: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(data)) return data as Array<Record<string, unknown>>;
  if (typeof data === 'object' && data !== null) {
    for (const name of ['users', 'members', 'rows', 'items', 'list']) {
      const value = (data as Record<string, unknown>)[name];
      if (Array.isArray(value)) return value as Array<Record<string, unknown>>;
    }
  }
  return [];
}
