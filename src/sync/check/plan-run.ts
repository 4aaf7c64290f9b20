import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { WorksheetStructure } from '../../api/types.ts';
import { createSyncContext, readWorksheetKeys } from '../write/create-sync-context.ts';
import type { SyncDeps } from '../write/create-sync-context.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';
import { rowToWrite } from '../batch/batch-row.ts';
import { classifyRow } from '../write/classify-row.ts';
import { keyOfRecord } from '../read/key-of-record.ts';
import { readBatches } from '../read/read-batches.ts';
import type { RejectedRecord } from '../read/read-batches.ts';
import type { IndexEntry } from '../state/key-index.ts';
import type { Source } from '../model/types.ts';
import { positionLabel } from '../state/dead-letter-format.ts';
import type { FieldValue } from '../../api/types.ts';

/** What a run would do, computed with the same mapping and comparison code, writing nothing. */
export interface RunPlan {
  read: number;
  create: number;
  update: number;
  unchanged: number;
  skip: number;
  delete: number;
  reject: number;
  /** Requests the writes would take (reads to build the index and compare rows included). */
  apiCalls: {
    total: number;
    reads: number;
    /**
     * Of `reads`, the lookups the mapping makes (related rows by key, members and
     * departments by name), each distinct value once a run: as many as the plan made.
     */
    lookups: number;
    batchCreates: number;
    batchUpdates: number;
    singleUpdates: number;
    batchDeletes: number;
  };
  /** Mirror: the deletes exceed the safety share and the run would be refused. */
  deleteRefused: boolean;
  /** The first rejected records, with their reasons. */
  rejects: Array<{ position: string; message: string }>;
  /**
   * What a person should look at before running: a mapped column empty in every row read
   * while the run would clear the field it fills in rows that hold a value (a misspelt or
   * renamed column blanks a whole column of the worksheet).
   */
  warnings: string[];
  /**
   * The first mapped rows as they would be written, field by field (option texts for
   * selects): what `map`, `decimal`, `trueValues` and the coercers made of the source.
   */
  sample: Array<{ position: string; values: Record<string, unknown> }>;
}

/** Rows shown in {@link RunPlan.sample}. */
const SAMPLE_ROWS = 3;

/** A written value as a person reads it: a select's option keys as their texts. */
function shownValue(field: MappingPlan['fields'][number], value: unknown): unknown {
  if (field.options === undefined || !Array.isArray(value)) return value;
  return (value as unknown[]).map((v) =>
    typeof v === 'string' ? (field.options!.byKey.get(v)?.value ?? v) : v,
  );
}

const isBlank = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.length === 0);

/**
 * A dry run: reads the worksheet's keys and the source, maps every record, compares
 * the rows a run would update, and counts. Nothing is written to the platform or to
 * Redis (the stored index is only read, for the content hashes of earlier runs).
 */
export async function planRun(
  spec: JobSpec,
  prepared: { structure: WorksheetStructure; plan: MappingPlan },
  source: Source,
  deps: SyncDeps & { client: PlatformClient; onProgress?: (plan: Readonly<RunPlan>, read: number) => void },
): Promise<RunPlan> {
  const ctx = createSyncContext(spec, prepared, { runId: 'plan', attempt: 1 }, deps);
  const result: RunPlan = {
    read: 0,
    create: 0,
    update: 0,
    unchanged: 0,
    skip: 0,
    delete: 0,
    reject: 0,
    apiCalls: {
      total: 0,
      reads: 1,
      lookups: 0,
      batchCreates: 0,
      batchUpdates: 0,
      singleUpdates: 0,
      batchDeletes: 0,
    },
    deleteRefused: false,
    rejects: [],
    warnings: [],
    sample: [],
  };
  // Per mapped column: rows read that hold a value in it; per field: rows it would clear.
  const filled = new Map<string, number>();
  const clears = new Map<string, number>();
  const existing = new Map<string, string>();
  if (ctx.mode !== 'append') {
    for await (const { key, rowId } of readWorksheetKeys(deps.client, prepared.structure, prepared.plan)) {
      if (!existing.has(key)) existing.set(key, rowId);
    }
    result.apiCalls.reads += Math.max(1, Math.ceil(existing.size / 1000));
  }
  const seen = new Set<string>();
  const reject = (records: RejectedRecord[]) => {
    result.reject += records.length;
    for (const r of records) {
      const key = keyOfRecord(prepared.plan, r.source.data);
      if (key !== undefined) seen.add(key);
      if (result.rejects.length < 20) {
        result.rejects.push({ position: positionLabel(r.source.position), message: r.failure.message });
      }
    }
  };
  const onRejected = (records: RejectedRecord[]) => Promise.resolve(reject(records));
  const progress = { read: 0, cursor: undefined as unknown };
  for await (const read of readBatches(source, {
    plan: prepared.plan,
    batchSize: ctx.batchSize,
    onRejected,
    progress,
  })) {
    deps.onProgress?.(result, progress.read);
    const rows = read.map(rowToWrite);
    // The plan asks what the run would (a new cache each run): its requests are the cost.
    const asked = deps.client.stats.requests;
    const failures = await ctx.resolveReferences(rows);
    result.apiCalls.lookups += deps.client.stats.requests - asked;
    result.apiCalls.reads += deps.client.stats.requests - asked;
    const ready = rows.filter((r) => !failures.has(r.index));
    for (const row of ready.slice(0, SAMPLE_ROWS - result.sample.length)) {
      const values: Record<string, unknown> = {};
      row.mapped.fields.forEach((fv, i) => {
        const field = prepared.plan.fields[i]!;
        values[field.target] = shownValue(field, fv.value);
      });
      result.sample.push({ position: positionLabel(row.source.position), values });
    }
    for (const row of rows) {
      for (const f of prepared.plan.fields) {
        if (f.column !== undefined && !isBlank(row.source.data[f.column]))
          filled.set(f.column, (filled.get(f.column) ?? 0) + 1);
      }
    }
    reject(
      rows
        .filter((r) => failures.has(r.index))
        .map((r) => ({ index: r.index, source: r.source, failure: failures.get(r.index)! })),
    );
    const hashes: Map<string, IndexEntry> =
      ctx.index === undefined
        ? new Map<string, IndexEntry>()
        : await ctx.index.getMany(ready.map((r) => r.mapped.key ?? ''));
    const candidates: Array<{ rowId: string; fields: FieldValue[] }> = [];
    let creates = 0;
    for (const row of ready) {
      const key = row.mapped.key;
      if (key !== undefined) seen.add(key);
      // The worksheet says which row the key matches; the index, the hash of its last write.
      const rowId = key === undefined ? undefined : existing.get(key);
      const indexed = hashes.get(key ?? '');
      const matched =
        rowId === undefined
          ? undefined
          : { rowId, hash: indexed?.rowId === rowId ? indexed.hash : undefined };
      const decided = classifyRow(ctx.mode, matched, row.mapped.hash, true);
      if (decided.kind === 'skip') result.skip += 1;
      else if (decided.kind === 'create') creates += 1;
      else if (decided.kind === 'unchanged') result.unchanged += 1;
      else candidates.push({ rowId: decided.rowId, fields: row.mapped.fields });
    }
    result.create += creates;
    result.apiCalls.batchCreates += Math.ceil(creates / ctx.batchSize);
    if (candidates.length > 0) {
      const current = await ctx.fetchRows(candidates.map((c) => c.rowId));
      result.apiCalls.reads += Math.ceil(candidates.length / 1000);
      const changes: Array<{ rowId: string; changed: FieldValue[] }> = [];
      for (const c of candidates) {
        const row = current.get(c.rowId);
        const diff = row === undefined ? { same: false, changed: c.fields } : ctx.compare(c.fields, row);
        if (diff.same) result.unchanged += 1;
        else changes.push({ rowId: c.rowId, changed: diff.changed });
        if (row !== undefined) {
          for (const fv of diff.changed) {
            const field = prepared.plan.byTarget.get(fv.id);
            if (
              field !== undefined &&
              isBlank(fv.value) &&
              !isBlank(row.values[field.id] ?? row.values[field.alias ?? ''])
            )
              clears.set(field.id, (clears.get(field.id) ?? 0) + 1);
          }
        }
      }
      result.update += changes.length;
      for (const group of ctx.groupChangeSets(changes)) {
        if (group.rowIds.length > 1) result.apiCalls.batchUpdates += 1;
        else result.apiCalls.singleUpdates += 1;
      }
    }
  }
  result.read = progress.read;
  for (const f of prepared.plan.fields) {
    const cleared = clears.get(f.id) ?? 0;
    if (f.column === undefined || result.read === 0 || (filled.get(f.column) ?? 0) > 0 || cleared === 0)
      continue;
    result.warnings.push(
      `column "${f.column}" is empty in all ${result.read} rows read, and the run would clear ${f.name} (${f.target}) on ${cleared} worksheet rows that hold a value: check the mapping`,
    );
  }
  if (ctx.mode === 'mirror') {
    for (const key of existing.keys()) if (!seen.has(key)) result.delete += 1;
    result.apiCalls.batchDeletes = Math.ceil(result.delete / ctx.batchSize);
    const share = existing.size === 0 ? 0 : result.delete / existing.size;
    result.deleteRefused = share > spec.options.deleteThreshold && !spec.options.forceDelete;
  }
  const a = result.apiCalls;
  a.total =
    a.reads + a.batchCreates + a.batchUpdates + a.singleUpdates + (result.deleteRefused ? 0 : a.batchDeletes);
  return result;
}
