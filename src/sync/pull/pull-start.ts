/**
 * Where an incremental pull starts: past its saved cursor, or from the beginning. A
 * cursor only means "the sink holds every row up to here" while the sink is the one the
 * cursor was saved with, written in the same shape. So a pull starts over (and rebuilds
 * its sink) when asked (`run --full`), when its file is gone, or when the job changed
 * what lands in the sink: its source, filter, fields or sink. Today's shape is saved
 * with the cursor as a fingerprint.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { locateSinkFile } from '../sinks/sink-file.ts';
import type { SinkDeps } from '../sinks/sink-spec.ts';

/** What a pull does with its saved cursor. */
export interface PullStart {
  /** Read everything and replace the sink's content, ignoring the saved cursor. */
  fromStart: boolean;
  /** Why it starts over, for the run's log and report; absent when it continues. */
  reason?: string;
  /** The fingerprint of the job's shape, saved with the cursor the run reaches. */
  shape: string;
}

/** The fingerprint of what decides a pull's rows and where they land. */
export function pullShape(spec: Pick<JobSpec, 'source' | 'mappings' | 'sink' | 'incremental'>): string {
  const shape = {
    source: spec.source,
    fields: spec.mappings.map((m) => [m.target, m.from ?? null, m.value ?? null]),
    sink: spec.sink,
    cursor: spec.incremental?.cursor ?? null,
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}

/** Whether the pull's file sink has lost its file (a table sink is never "missing"). */
async function sinkFileMissing(spec: Pick<JobSpec, 'sink'>, deps: SinkDeps): Promise<boolean> {
  const sink = spec.sink;
  if (sink === undefined || sink.type === 'postgres') return false;
  const file = await locateSinkFile(sink.path, deps)();
  return (await stat(file).catch(() => undefined)) === undefined;
}

/**
 * Decides how an incremental pull starts. `saved` is the cursor and the shape it was
 * saved with (the shape is absent for a cursor saved before shapes were kept: such a
 * cursor is trusted, as it was when saved).
 */
export async function decidePullStart(
  spec: Pick<JobSpec, 'source' | 'mappings' | 'sink' | 'incremental'>,
  saved: { cursor: string | undefined; shape: string | undefined },
  options: { full: boolean; sinkDeps: SinkDeps },
): Promise<PullStart> {
  const shape = pullShape(spec);
  if (spec.incremental === undefined || saved.cursor === undefined) return { fromStart: false, shape };
  if (options.full) return { fromStart: true, reason: 'run with --full: every row is read again', shape };
  if (await sinkFileMissing(spec, options.sinkDeps))
    return {
      fromStart: true,
      reason: 'the sink file is missing: every row is read again to write it whole',
      shape,
    };
  if (saved.shape !== undefined && saved.shape !== shape)
    return {
      fromStart: true,
      reason:
        'the job changed its source, filter, fields or sink since the cursor was saved: every row is read again',
      shape,
    };
  return { fromStart: false, shape };
}
