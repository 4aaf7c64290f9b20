/**
 * What reading a CSV file costs per record, side by side on the same orders file in the
 * same run (issue 12):
 *
 * - `reader`: the csv source (createSource: records as objects with their positions,
 *   cursor filter, header checks), drained a record at a time, as every consumer but
 *   `readBatches` reads it;
 * - `readerByChunk`: the same, a file chunk's records at a time, as a CSV import reads
 *   it (sync/sources/record-chunks.ts);
 * - `records`: the raw records under it (sources/csv-records.ts: the scanner, csv-parse
 *   only from a record the scanner is not sure of), without objects;
 * - `csvParse`: csv-parse alone with the reader's options (`info` for line numbers), as
 *   the reader used it before the scanner;
 * - `lineSplit`: the floor: the file decoded, split at `\n`, each line split at `,`
 *   (wrong for quoted fields; it only says what reading the bytes costs).
 *
 * `nsPerRecord` is each one's time per record; `readerOverLineSplit` and
 * `readerOverCsvParse` compare the reader with the floor and with csv-parse alone.
 *
 * Usage: node bench/csv-read.ts [--rows 1000000] [--repeats 3]
 * Prints one JSON object on stdout; the best of `repeats` runs of each.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse';
import { chunksOf } from '../src/sync/sources/record-chunks.ts';
import { createSource } from '../src/sync/sources/create-source.ts';
import { readCsvRecords } from '../src/sync/sources/csv-records.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { writeOrdersCsv } from './lib/orders-fixture.ts';

const flags = parseNumberFlags('bench/csv-read.ts', {
  rows: { default: 1_000_000 },
  repeats: { default: 3 },
});
const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-csv-read-'));
try {
  const file = path.join(dir, 'orders.csv');
  const bytes = await writeOrdersCsv(file, flags.rows);
  const records = flags.rows + 1;

  /** Best time of `repeats` runs and the count the last run returned (every way must agree). */
  const best = async (fn: () => Promise<number>): Promise<{ ms: number; count: number }> => {
    let ms = Infinity;
    let count = 0;
    for (let i = 0; i < flags.repeats; i++) {
      const started = performance.now();
      count = await fn();
      ms = Math.min(ms, performance.now() - started);
    }
    return { ms, count };
  };

  const reader = await best(async () => {
    let n = 0;
    for await (const _item of createSource({ type: 'csv', path: './orders.csv' }, { env: {}, baseDir: dir }))
      n += 1;
    return n + 1;
  });
  // The reader as a CSV import reads it: a file chunk's records at a time (sync/sources/record-chunks.ts).
  const readerByChunk = await best(async () => {
    let n = 0;
    const chunks = chunksOf(createSource({ type: 'csv', path: './orders.csv' }, { env: {}, baseDir: dir }));
    if (chunks === undefined) throw new Error('bench/csv-read.ts: the csv source hands over no chunks');
    for await (const chunk of chunks) n += chunk.length;
    return n + 1;
  });
  const raw = await best(async () => {
    let n = 0;
    const batches = readCsvRecords(
      createReadStream(file) as AsyncIterable<Buffer>,
      { type: 'csv', path: file },
      {
        onCsvError: (err) => err,
      },
    );
    for await (const batch of batches) n += batch.length;
    return n;
  });
  const csvParse = await best(async () => {
    let n = 0;
    const parser = createReadStream(file).pipe(
      parse({
        bom: true,
        delimiter: ',',
        quote: '"',
        skip_empty_lines: true,
        relax_column_count: true,
        info: true,
      }),
    );
    for await (const _record of parser) n += 1;
    return n;
  });
  const lineSplit = await best(async () => {
    let n = 0;
    let held = '';
    const decoder = new TextDecoder();
    for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
      const lines = (held + decoder.decode(chunk, { stream: true })).split('\n');
      held = lines.pop() ?? '';
      for (const line of lines) if (line.split(',').length > 0) n += 1;
    }
    return held === '' ? n : n + 1;
  });

  const ns = (ms: number) => Math.round((ms * 1e6) / records);
  console.log(
    JSON.stringify(
      {
        bench: 'csv-read',
        rows: flags.rows,
        fileMiB: Number((bytes / 1024 / 1024).toFixed(1)),
        readerMs: Math.round(reader.ms),
        readerByChunkMs: Math.round(readerByChunk.ms),
        recordsMs: Math.round(raw.ms),
        csvParseMs: Math.round(csvParse.ms),
        lineSplitMs: Math.round(lineSplit.ms),
        nsPerRecord: {
          reader: ns(reader.ms),
          readerByChunk: ns(readerByChunk.ms),
          records: ns(raw.ms),
          csvParse: ns(csvParse.ms),
          lineSplit: ns(lineSplit.ms),
        },
        readerOverCsvParse: Number((reader.ms / csvParse.ms).toFixed(2)),
        readerOverLineSplit: Number((reader.ms / lineSplit.ms).toFixed(2)),
        countsAgree: [reader.count, readerByChunk.count, raw.count, csvParse.count, lineSplit.count].every(
          (n) => n === records,
        ),
        loadAverage: Number(loadavg()[0]!.toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
