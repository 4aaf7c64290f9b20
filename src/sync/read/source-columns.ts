/**
 * A mapped source column the source does not have is a typo, and written as is it
 * blanks a worksheet field on every row (`tier: { from: teir }` cleared Tier on 4,998
 * rows). So the first records are read before anything is written, and a column that
 * none of them has stops the run as a configuration error naming the column, the field
 * and the columns the source does have.
 */
import { ConfigError } from '../../ground/errors.ts';
import type { SourceSpec } from '../sources/source-spec.ts';
import type { SourceItem } from '../sources/source-error.ts';
import { hasRecordChunks, recordChunks, type ChunkedSource } from '../sources/record-chunks.ts';
import type { FieldMapping } from '../model/types.ts';
import { delimiterHint } from '../sources/csv-delimiter.ts';
import { closestName } from '../sources/closest-name.ts';

/** Records read before the columns are judged (sparse JSON may omit a key in some). */
export const COLUMN_SAMPLE = 100;

/** Sources whose every record has the same columns: the first record tells them all. */
const FIXED_COLUMNS: ReadonlySet<SourceSpec['type']> = new Set(['csv', 'postgres', 'mysql', 'worksheet']);

function describe(spec: SourceSpec): string {
  switch (spec.type) {
    case 'csv':
    case 'ndjson':
    case 'json':
      return `${spec.type} source ${spec.path}`;
    case 'http':
      return 'http source';
    case 'postgres':
    case 'mysql':
      return `${spec.type} source (${spec.urlEnv})`;
    case 'postgres-cdc':
      return `postgres-cdc source ${spec.table} (${spec.urlEnv})`;
    case 'worksheet':
      return `worksheet source ${spec.worksheet}`;
    case 'singer':
      return `singer stream ${spec.stream}`;
  }
}

/**
 * The mappings whose `from` column none of `samples` has; for sources without a fixed
 * set of columns a mapping with a `default` may name a column that is absent.
 */
export function missingColumns(
  spec: SourceSpec,
  mappings: readonly FieldMapping[],
  samples: ReadonlyArray<Readonly<Record<string, unknown>>>,
): { missing: FieldMapping[]; columns: string[] } {
  const columns = new Set<string>();
  for (const data of FIXED_COLUMNS.has(spec.type) ? samples.slice(0, 1) : samples) {
    for (const key of Object.keys(data)) columns.add(key);
  }
  const missing = mappings.filter(
    (m) =>
      m.from !== undefined && !columns.has(m.from) && (FIXED_COLUMNS.has(spec.type) || !('default' in m)),
  );
  return { missing, columns: [...columns] };
}

/**
 * What a sampled item tells of the source's columns: a record's data, or, for a record
 * that could not be read, the columns its source reported (a CSV header); else undefined.
 */
export function columnSample(item: SourceItem): Record<string, unknown> | undefined {
  if (item.error === undefined) return item.data;
  if (item.columns === undefined) return undefined;
  const columns: Record<string, unknown> = {};
  for (const name of item.columns) columns[name] = undefined;
  return columns;
}

/** The configuration error for missing columns, or undefined when every column is there. */
export function missingColumnsError(
  job: string,
  spec: SourceSpec,
  mappings: readonly FieldMapping[],
  samples: ReadonlyArray<Readonly<Record<string, unknown>>>,
): ConfigError | undefined {
  if (samples.length === 0) return undefined;
  const { missing, columns } = missingColumns(spec, mappings, samples);
  if (missing.length === 0) return undefined;
  const shown = columns.filter((c) => !c.startsWith('_')).slice(0, 30);
  const lines = missing.map((m) => {
    const hint = closestName(m.from ?? '', columns);
    return `  - ${m.target}: { from: ${m.from} }: no such column${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`;
  });
  // One column holding `;`s: the file was split at the wrong delimiter.
  const hint =
    spec.type === 'csv' && columns.length === 1
      ? delimiterHint(columns[0]!, spec.delimiter ?? ',', spec.quote)
      : undefined;
  return new ConfigError(
    `job ${job}: the ${describe(spec)} has no column${missing.length === 1 ? '' : 's'} the mapping reads; nothing was written:\n` +
      `${lines.join('\n')}\n  its columns: ${shown.join(', ')}${columns.length > shown.length ? ', ...' : ''}` +
      (hint === undefined ? '' : `\n  ${hint}`),
  );
}

/**
 * The chunks of `chunks`, held back until the first {@link COLUMN_SAMPLE} records (or
 * all, when fewer) have every mapped column: the chunk form of {@link checkSourceColumns}.
 */
async function* checkedChunks(
  job: string,
  spec: SourceSpec,
  mappings: readonly FieldMapping[],
  chunks: AsyncIterable<readonly SourceItem[]>,
): AsyncGenerator<readonly SourceItem[]> {
  const iterator = chunks[Symbol.asyncIterator]();
  // However the read ends (a missing column, the consumer's break, an error), the source is closed.
  try {
    const held: Array<readonly SourceItem[]> = [];
    const samples: Array<Record<string, unknown>> = [];
    while (samples.length < COLUMN_SAMPLE) {
      const next = await iterator.next();
      if (next.done === true) break;
      held.push(next.value);
      for (const item of next.value) {
        if (samples.length === COLUMN_SAMPLE) break;
        const sample = columnSample(item);
        if (sample !== undefined) samples.push(sample);
      }
    }
    const problem = missingColumnsError(job, spec, mappings, samples);
    if (problem !== undefined) throw problem;
    // The sample is passed on chunk by chunk, none of it held for the rest of the read.
    while (held.length > 0) yield held.shift()!;
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
  } finally {
    await iterator.return?.();
  }
}

/**
 * Passes the records of `source` through once the first {@link COLUMN_SAMPLE} of them
 * (or all, when fewer) have every mapped column; throws before yielding anything
 * otherwise, so no batch of a mistyped mapping is ever written. After the sample it
 * hands each `next()` to the source's own iterator: an async generator in between cost
 * about a microsecond per record (1M-row import, bench/import.ts). A source that reads a
 * chunk at a time (record-chunks.ts) is checked the same way in that form too.
 */
export function checkSourceColumns(
  job: string,
  spec: SourceSpec,
  mappings: readonly FieldMapping[],
  source: AsyncIterable<SourceItem>,
): AsyncIterable<SourceItem> {
  const checked: AsyncIterable<SourceItem> & Partial<ChunkedSource<SourceItem>> = {
    [Symbol.asyncIterator](): AsyncIterator<SourceItem> {
      const iterator = source[Symbol.asyncIterator]();
      let buffered: SourceItem[] | undefined;
      let taken = 0;
      const close = async (): Promise<IteratorResult<SourceItem>> => {
        buffered = [];
        await iterator.return?.();
        return { done: true, value: undefined };
      };
      const sample = async (): Promise<SourceItem[]> => {
        const items: SourceItem[] = [];
        const samples: Array<Record<string, unknown>> = [];
        while (samples.length < COLUMN_SAMPLE) {
          const next = await iterator.next();
          if (next.done === true) break;
          items.push(next.value);
          const sampled = columnSample(next.value);
          if (sampled !== undefined) samples.push(sampled);
        }
        const problem = missingColumnsError(job, spec, mappings, samples);
        if (problem !== undefined) throw problem;
        return items;
      };
      const sampled = async (): Promise<IteratorResult<SourceItem>> => {
        try {
          buffered = await sample();
        } catch (err) {
          await close();
          throw err;
        }
        return next();
      };
      // Not an async function: once the sample is passed on, each record is the source's
      // own `next()` promise, without one more promise around it per record.
      const next = (): Promise<IteratorResult<SourceItem>> => {
        if (buffered === undefined) return sampled();
        if (taken < buffered.length) return Promise.resolve({ done: false, value: buffered[taken++]! });
        if (taken > 0) {
          // The sample is passed on: hold none of it for the rest of the read.
          buffered = [];
          taken = 0;
        }
        return iterator.next();
      };
      return { next, return: close };
    },
  };
  if (hasRecordChunks(source))
    checked[recordChunks] = () => checkedChunks(job, spec, mappings, source[recordChunks]());
  return checked;
}
