/**
 * The part the CSV and NDJSON sinks share: how a run's records meet the file they go to
 * (`SinkWriteMode`). In `replace` and `merge` the run writes aside (aside-file.ts) and
 * `close` renames the result over the file, so a crash or a failed run leaves the previous
 * complete file. Only the keys of the run's records are held in memory: when the run
 * brought a key twice, or merges into an old file, `close` streams the old file and the
 * run's aside file into a second aside file, keeping each key's last row.
 */
import { stat } from 'node:fs/promises';
import { createAsideFile, type AsideFile } from './aside-file.ts';
import { createFileAppender } from './file-appender.ts';
import type { Sink, SinkWriteMode } from './sink-spec.ts';
import { SinkError } from './sink-error.ts';

type Row = Record<string, unknown>;

/** One file format as the file sink needs it. */
export interface FileRowCodec {
  /**
   * Chooses the layout before the first batch. `previous` is the existing file when the
   * run keeps its rows (merge, append), else undefined. Returns whether `previous`
   * already opens with the preamble (a CSV file with its header).
   */
  start(previous: string | undefined, first: Row): Promise<boolean>;
  /** The opening text of a new file, once `start` ran ('' before). */
  preamble(): string;
  /**
   * The text of a batch whose first record is row `firstRow` of the run; throws
   * SINK_INVALID_RECORD naming the rows it cannot write.
   */
  format(records: Row[], firstRow: number): string;
  /** A key column's value as the file holds it, so keys from records and files compare. */
  cell(value: unknown): string;
  /** The rows of a file written in this format, with the text each was written as. */
  rows(file: string): AsyncIterable<{ record: Row; text: string }>;
}

export interface FileSinkOptions {
  /** The file as the job names it, for messages. */
  shown: string;
  /** The checked path (data-dir confinement), resolved on first use. */
  locate: () => Promise<string>;
  write: SinkWriteMode;
  key: readonly string[] | undefined;
}

const exists = async (file: string): Promise<boolean> =>
  (await stat(file).catch(() => undefined)) !== undefined;

/** Creates a file sink over a format. */
export function createFileSink(codec: FileRowCodec, options: FileSinkOptions): Sink {
  const { shown, locate, write, key } = options;
  const appender = write === 'append' ? createFileAppender(shown, locate) : undefined;
  const aside: AsideFile | undefined = write === 'append' ? undefined : createAsideFile(shown, locate);
  /** Key → ordinal of its last record in the run. */
  const lastOf = new Map<string, number>();
  let ordinal = 0;
  let repeated = false;
  let previous: string | undefined;
  let started = false;
  /** Written before the first batch that is written (a CSV header line). */
  let opening = '';
  let tail: Promise<void> = Promise.resolve();

  const keyOf = (row: Row): string | undefined => {
    if (key === undefined) return undefined;
    const parts: string[] = [];
    for (const column of key) {
      const value = row[column];
      if (value === undefined || value === null || value === '') return undefined;
      parts.push(codec.cell(value));
    }
    return JSON.stringify(parts);
  };

  const writeBatch = async (records: Row[]): Promise<void> => {
    const first = records[0];
    if (first === undefined) return;
    if (write === 'merge' && key === undefined)
      throw new SinkError(
        'SINK_CONFIG',
        `${shown}: an incremental pull merges into the file by key, and the sink names none: set sink.key to the column(s) that identify a row (e.g. the one mapped from rowid)`,
      );
    const keys = records.map(keyOf);
    if (key !== undefined) {
      const bad = keys.flatMap((k, i) => (k === undefined ? [i] : []));
      if (bad.length > 0)
        throw new SinkError(
          'SINK_INVALID_RECORD',
          `${shown}: row(s) ${bad.map((b) => ordinal + b + 1).join(', ')} of this run have no value in the key column(s) ${key.join(', ')} (sink.key); every row needs one, as the file holds each key once`,
          bad,
        );
    }
    if (!started) {
      const target = await locate();
      previous = write !== 'replace' && (await exists(target)) ? target : undefined;
      const opened = await codec.start(previous, first);
      // The run's own aside file always opens with the preamble: it is read back.
      opening = appender !== undefined && opened ? '' : codec.preamble();
      started = true;
    }
    const text = opening + codec.format(records, ordinal + 1);
    if (appender !== undefined) await appender.append(text);
    else await aside?.append(text);
    opening = '';
    for (const k of keys) {
      if (k !== undefined && lastOf.has(k)) repeated = true;
      if (k !== undefined) lastOf.set(k, ordinal);
      ordinal++;
    }
  };

  /** Streams the kept rows of the old file and of the run into a second aside file. */
  const rewrite = async (run: AsideFile): Promise<void> => {
    const out = createAsideFile(shown, locate, { sweepLeftovers: false });
    let buffer = codec.preamble();
    const put = async (text: string): Promise<void> => {
      buffer += text;
      if (buffer.length >= 64 * 1024) {
        await out.append(buffer);
        buffer = '';
      }
    };
    try {
      if (previous !== undefined)
        for await (const row of codec.rows(previous)) {
          const k = keyOf(row.record);
          // Old rows without a key have nothing to be replaced by: they stay.
          if (k === undefined || !lastOf.has(k)) await put(row.text);
        }
      await run.flush();
      let i = 0;
      for await (const row of codec.rows(run.path)) {
        const k = keyOf(row.record);
        if (k === undefined || lastOf.get(k) === i) await put(row.text);
        i++;
      }
      await out.append(buffer);
      await out.commit();
    } catch (err) {
      await out.discard();
      throw err;
    }
  };

  const finish = async (): Promise<void> => {
    if (appender !== undefined) return appender.close();
    if (aside === undefined) return;
    // A merge that brought nothing leaves the file as it was; an empty full pull empties it.
    if (!started && write === 'merge') return aside.discard();
    if (previous === undefined && !repeated) return aside.commit();
    try {
      await rewrite(aside);
    } finally {
      await aside.discard();
    }
  };

  return {
    write(records) {
      const next = tail.then(() => writeBatch(records));
      tail = next.catch(() => undefined);
      return next;
    },
    async close() {
      await tail;
      await finish();
    },
    async abort() {
      await tail;
      if (appender !== undefined) return appender.close();
      await aside?.discard();
    },
  };
}
