import { isLaterCursor } from '../sources/cursor.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { Sink } from '../sinks/sink-spec.ts';
import type { Source } from '../model/types.ts';

export interface PullProgress {
  read: number;
  written: number;
  cursor: unknown;
}

/** One sink record from a worksheet row: sink column ← worksheet field (or a constant). */
function project(
  spec: JobSpec,
  data: Readonly<Record<string, unknown>>,
  timeForm: ((record: Record<string, unknown>) => void) | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const m of spec.mappings) {
    let value = m.from === undefined ? m.value : data[m.from];
    if ((value === undefined || value === null || value === '') && m.default !== undefined) value = m.default;
    out[m.target] = value ?? null;
  }
  timeForm?.(out);
  return out;
}

/**
 * The pull direction: a worksheet's rows out to a sink (a postgres table upserted by
 * key, a csv or an ndjson file), in batches. The sink confirms each batch before the
 * next is read, so the cursor the caller saves afterwards covers only written rows.
 */
export async function pullRun(
  spec: JobSpec,
  source: Source,
  sink: Sink,
  options: {
    batchSize?: number;
    onBatch?: (progress: PullProgress) => Promise<void>;
    /** Puts the time columns of a record in the pull's one form (pull-columns.ts). */
    timeForm?: ((record: Record<string, unknown>) => void) | undefined;
  } = {},
): Promise<PullProgress> {
  const batchSize = options.batchSize ?? 500;
  const progress: PullProgress = { read: 0, written: 0, cursor: undefined };
  let batch: Array<Record<string, unknown>> = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await sink.write(batch);
    progress.written += batch.length;
    batch = [];
    await options.onBatch?.(progress);
  };
  try {
    for await (const record of source) {
      progress.read += 1;
      if (record.cursor !== undefined && record.cursor !== null) {
        if (isLaterCursor(record.cursor, progress.cursor)) progress.cursor = record.cursor;
      }
      batch.push(project(spec, record.data, options.timeForm));
      if (batch.length >= batchSize) await flush();
    }
    await flush();
  } catch (err) {
    // A file sink then keeps the previous complete file instead of this run's part of it.
    // The run's own error is the one to report, not a failure to clean up after it.
    await sink.abort().catch(() => undefined);
    throw err;
  }
  await sink.close();
  return progress;
}
