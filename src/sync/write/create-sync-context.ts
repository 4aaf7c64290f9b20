import type { PlatformClient } from '../../api/create-platform-client.ts';
import { createRowNormaliser } from '../../api/rows/normalise-row.ts';
import { iterateRowPages } from '../../api/rows/iterate-rows.ts';
import type { Filter, WorksheetStructure } from '../../api/types.ts';
import type { Logger } from '../../ground/logger.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { groupChangeSets } from '../mapping/group-change-sets.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';
import { keyFields, keyParts } from '../mapping/compose-key.ts';
import { resolveReferences } from '../mapping/resolve-references.ts';
import {
  anyOf,
  chunks,
  createReferenceLookups,
  createRowReader,
} from '../prepare/create-reference-lookups.ts';
import { keyOfRow, rowMatches } from '../mapping/row-matches.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import { createKeyIndex, indexFormatOf } from '../state/key-index.ts';
import type { RedisClient } from '../state/redis-types.ts';
import type { RunStore } from '../state/run-store.ts';
import type { SyncContext } from './sync-context.ts';
import type { PreparedJob } from '../prepare/plan-job.ts';
import type { NormalisedRow } from '../../api/types.ts';
import type { Failure } from '../batch/batch-row.ts';

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
  /** Compare with the worksheet, ignoring saved content hashes (`run --full`). @defaultValue false */
  full?: boolean;
  /**
   * The run filled the key index by a full scan, so a key it does not know is in no
   * worksheet row. Otherwise (an incremental run, a replay) such keys are looked up.
   * @defaultValue true
   */
  indexComplete?: boolean;
}

export { anyOf };

const LOOKUP_CHUNK = 100;

/**
 * Rows holding any of `keys`: `field = key` for a single key; for a composite key one
 * AND group of its parts per key under an OR group (the two levels the platform allows,
 * platform-shapes §8 [C]).
 */
export function keysFilter(keyIds: readonly string[], keys: readonly string[]): Filter {
  if (keyIds.length === 1) return anyOf(keyIds[0]!, keys);
  return {
    type: 'group',
    logic: 'OR',
    children: keys.map((key) => ({
      type: 'group' as const,
      logic: 'AND' as const,
      children: keyParts(key, keyIds.length).map((value, i) => ({
        type: 'condition' as const,
        field: keyIds[i]!,
        operator: 'eq' as const,
        value,
      })),
    })),
  };
}

/** Builds the context batches of one run are written with. */
export function createSyncContext(
  spec: JobSpec,
  prepared: PreparedJob,
  run: { runId: string; attempt: number },
  deps: SyncDeps,
): SyncContext {
  const target = spec.target!;
  const { structure, plan } = prepared;
  const worksheetId = structure.id;
  const rows = deps.client.rows;
  const keyIds = keyFields(plan).map((f) => f.id);
  const reader = createRowReader(deps.client);
  reader.know(structure, target.worksheet);
  const lookups = prepared.lookups ?? createReferenceLookups(deps.client, reader);
  const listMatching = (filter: Filter, fields?: string[]) => reader.list(worksheetId, filter, fields);
  /**
   * Rows holding `keys`, 100 keys a request. A text key takes no `in` (platform-shapes
   * §8 [C]: the Text family's operators are eq, ne, contains...), so keysFilter asks by
   * an OR group of `eq` conditions. Of two rows with one key, the first listed is kept.
   */
  async function rowsByKey(keys: readonly string[], fields?: string[]): Promise<Map<string, NormalisedRow>> {
    const found = new Map<string, NormalisedRow>();
    if (keyIds.length === 0) return found;
    for (const part of chunks([...new Set(keys)], LOOKUP_CHUNK)) {
      for (const row of await listMatching(keysFilter(keyIds, part), fields)) {
        const key = keyOfRow(plan, row);
        if (key !== undefined && !found.has(key)) found.set(key, row);
      }
    }
    return found;
  }

  // A two-way job reaches here only through check and plan; it matches keys as upsert does.
  const mode = target.mode === 'two-way' ? 'upsert' : target.mode;
  return {
    runId: run.runId,
    job: spec.name,
    attempt: run.attempt,
    mode,
    worksheetId,
    triggerWorkflow: target.triggerWorkflow,
    batchSize: target.batchSize,
    plan,
    rows,
    full: deps.full === true,
    indexComplete: deps.indexComplete !== false,
    index:
      mode === 'append'
        ? undefined
        : createKeyIndex({
            redis: deps.redis,
            prefix: deps.prefix,
            job: spec.name,
            format: indexFormatOf(mode),
          }),
    runs: deps.runs,
    deadLetters: deps.deadLetters,
    log: deps.log,
    async resolveReferences(batch) {
      const failures = new Map<number, Failure>();
      if (!batch.some((r) => r.pending !== undefined)) return failures;
      const resolved = await resolveReferences(
        plan,
        batch.map((r) => r.mapped),
        lookups,
      );
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
      for (const [key, row] of await rowsByKey(keys, keyIds)) found.set(key, row.id);
      return found;
    },
    findByKeys: (keys) => rowsByKey(keys),
    async fetchRows(rowIds) {
      const found = new Map<string, NormalisedRow>();
      for (const part of chunks(rowIds, 1000)) {
        // A group at the top: the platform's own generator never sends a bare condition [C].
        const filter: Filter = {
          type: 'group',
          logic: 'AND',
          children: [{ type: 'condition', field: 'rowid', operator: 'in', value: part }],
        };
        for (const row of await listMatching(filter)) found.set(row.id, row);
      }
      return found;
    },
    compare: (fields, existing) => rowMatches(plan, fields, existing),
    groupChangeSets,
  };
}

/** A page of a key scan, for its progress. */
export interface KeyPage {
  pageIndex: number;
  pageSize: number;
  rows: number;
  total: number | undefined;
}

/**
 * Key → row id of every worksheet row, reading only the key field (for the index). The
 * total is asked for so that a scan's progress can say "page 300 of 503".
 */
export async function* readWorksheetKeys(
  client: PlatformClient,
  structure: WorksheetStructure,
  plan: MappingPlan,
  onPage?: (page: KeyPage) => Promise<void>,
): AsyncGenerator<{ key: string; rowId: string }> {
  const keyIds = keyFields(plan).map((f) => f.id);
  if (keyIds.length === 0) return;
  const normalise = createRowNormaliser({ structure, timeZone: client.organisation.timeZone });
  for await (const page of iterateRowPages((body) => client.rows.list(structure.id, body), {
    fields: keyIds,
    ...(onPage === undefined ? {} : { includeTotalCount: true }),
  })) {
    for (const row of page.rows) {
      const normalised = normalise(row);
      const key = keyOfRow(plan, normalised);
      if (key !== undefined) yield { key, rowId: normalised.id };
    }
    await onPage?.({
      pageIndex: page.pageIndex,
      pageSize: page.pageSize,
      rows: page.rows.length,
      total: page.total,
    });
  }
}
