/**
 * What the read side of a CSV import costs per record (issue 12): the csv source behind
 * the column check, mapped into batches by readBatches with the orders job's mapping plan,
 * as a run reads it, without Redis or the platform. Same file, same run:
 *
 * - `byChunk`: the source handing its records over a file chunk at a time (record-chunks.ts),
 *   the way a run reads a CSV file;
 * - `byRecord`: the same source with its chunk method hidden, one record at a time, the
 *   way a run reads every other source (and read CSV files before).
 *
 * `nsPerRecord` is wall time, `cpuNsPerRecord` the process's CPU time (GC threads included).
 *
 * Usage: node bench/read-batches.ts [--rows 1000000] [--repeats 3]
 * Prints one JSON object on stdout; the best of `repeats` runs of each.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { WorksheetStructure } from '../src/api/types.ts';
import { parseJobSpec } from '../src/sync/job-spec/load-job-spec.ts';
import { validateMapping } from '../src/sync/mapping/validate-mapping.ts';
import { readBatches } from '../src/sync/read/read-batches.ts';
import { checkSourceColumns } from '../src/sync/read/source-columns.ts';
import { createSource } from '../src/sync/sources/create-source.ts';
import type { SourceRecord } from '../src/sync/model/types.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { createOrdersFixture, writeOrdersCsv } from './lib/orders-fixture.ts';

const flags = parseNumberFlags('bench/read-batches.ts', {
  rows: { default: 1_000_000 },
  repeats: { default: 3 },
});
const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-read-batches-'));
try {
  const file = path.join(dir, 'orders.csv');
  await writeOrdersCsv(file, flags.rows);
  const fixture = createOrdersFixture();
  const spec = parseJobSpec(
    fixture.jobYaml({ jobName: 'orders', batchSize: 100, csvPath: file }),
    'orders.yaml',
  );
  // The worksheet as the platform would describe it: ids and option keys given
  // (validateMapping reads type codes as they are).
  const structure: WorksheetStructure = {
    id: '65f000000000000000000000',
    name: fixture.worksheet.name,
    fields: fixture.worksheet.fields.map(({ options, ...f }, i) => ({
      ...f,
      id: `65f0000000000000000000${String(i + 1).padStart(2, '0')}`,
      ...(options === undefined
        ? {}
        : { options: options.map((o) => ({ value: o.value, index: o.index, key: `option-${o.index}` })) }),
    })),
  };
  const plan = validateMapping(spec.mappings, structure, { mode: 'append' });

  const source = () =>
    checkSourceColumns(
      spec.name,
      spec.source,
      spec.mappings,
      createSource(spec.source, { env: {}, baseDir: dir }),
    );
  const oneByOne = <T>(records: AsyncIterable<T>): AsyncIterable<T> => ({
    [Symbol.asyncIterator]: () => records[Symbol.asyncIterator](),
  });

  /** Best wall and CPU time of `repeats` reads, and the rows the last one mapped. */
  const best = async (open: () => AsyncIterable<SourceRecord>) => {
    let ms = Infinity;
    let cpuMs = Infinity;
    let rows = 0;
    for (let i = 0; i < flags.repeats; i++) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const progress = { read: 0, cursor: undefined };
      rows = 0;
      for await (const batch of readBatches(open(), {
        plan,
        batchSize: 1000,
        progress,
        onRejected: () => Promise.resolve(),
      }))
        rows += batch.length;
      const used = process.cpuUsage(cpu);
      ms = Math.min(ms, performance.now() - started);
      cpuMs = Math.min(cpuMs, (used.user + used.system) / 1000);
    }
    return { ms, cpuMs, rows };
  };

  const byRecord = await best(() => oneByOne(source()));
  const byChunk = await best(source);
  const ns = (ms: number) => Math.round((ms * 1e6) / flags.rows);
  console.log(
    JSON.stringify(
      {
        bench: 'read-batches',
        rows: flags.rows,
        byChunkMs: Math.round(byChunk.ms),
        byRecordMs: Math.round(byRecord.ms),
        nsPerRecord: { byChunk: ns(byChunk.ms), byRecord: ns(byRecord.ms) },
        cpuNsPerRecord: { byChunk: ns(byChunk.cpuMs), byRecord: ns(byRecord.cpuMs) },
        rowsAgree: byChunk.rows === flags.rows && byRecord.rows === flags.rows,
        loadAverage: Number(loadavg()[0]!.toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
