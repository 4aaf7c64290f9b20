/**
 * How a pull job's sink meets what it already holds: a full pull replaces the file, an
 * incremental pull merges into it by key (see `SinkWriteMode`). The key is the sink's own
 * `key`, else the column a job maps from the worksheet's `rowid`, which every row has
 * once and keeps for life.
 */
import type { FieldMapping } from '../model/types.ts';
import type { SinkDeps, SinkWriteMode } from './sink-spec.ts';

/** What a pull job tells `createSink` besides where files resolve. */
export function pullSinkOptions(job: {
  incremental?: unknown;
  mappings: readonly Pick<FieldMapping, 'target' | 'from'>[];
}): Pick<SinkDeps, 'write' | 'key'> {
  const rowid = job.mappings.find((m) => m.from === 'rowid');
  return {
    write: job.incremental === undefined ? 'replace' : 'merge',
    ...(rowid === undefined ? {} : { key: [rowid.target] }),
  };
}

/** The key columns of a file sink: its spec's, else the caller's. */
export function sinkKey(
  specKey: string | string[] | undefined,
  deps: SinkDeps,
): readonly string[] | undefined {
  if (specKey !== undefined) return typeof specKey === 'string' ? [specKey] : specKey;
  return deps.key !== undefined && deps.key.length > 0 ? deps.key : undefined;
}

/**
 * The write mode of a file sink. A caller that does not say gets merge when a key is
 * known (a re-run never holds a row twice) and the old append otherwise: replacing
 * unasked could drop the rows an incremental pull does not read again.
 */
export function sinkWriteMode(specKey: string | string[] | undefined, deps: SinkDeps): SinkWriteMode {
  return deps.write ?? (sinkKey(specKey, deps) === undefined ? 'append' : 'merge');
}
