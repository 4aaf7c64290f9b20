import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { ConfigError } from '../../../../src/ground/errors.ts';
import { offsetIndexes } from '../../../../src/sync/read/offset-indexes.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import { readBatches, type ReadProgress } from '../../../../src/sync/read/read-batches.ts';
import { hasRecordChunks, recordChunks } from '../../../../src/sync/sources/record-chunks.ts';
import { checkSourceColumns } from '../../../../src/sync/read/source-columns.ts';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import type { SourceDeps } from '../../../../src/sync/sources/source-deps.ts';
import type { CsvSourceSpec } from '../../../../src/sync/sources/source-spec.ts';
import type { SourceItem } from '../../../../src/sync/sources/source-error.ts';
import type { FieldMapping, SourceRecord } from '../../../../src/sync/model/types.ts';
import { createTempDir, rejection } from '../../../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('read-batches-chunks');
});
afterAll(async () => {
  await tmp.remove();
});

const structure: WorksheetStructure = {
  id: 'ws_orders',
  name: 'Orders',
  fields: [
    { id: '64a000000000000000000001', name: 'Order No', alias: 'order_no', type: 'Text' },
    { id: '64a000000000000000000002', name: 'Customer', alias: 'customer', type: 'Text' },
    { id: '64a000000000000000000003', name: 'Amount', alias: 'amount', type: 'Number' },
  ],
};
const mappings: FieldMapping[] = [
  { target: 'order_no', from: 'order' },
  { target: 'customer', from: 'customer' },
  { target: 'amount', from: 'amount' },
];
const plan = validateMapping(mappings, structure, { mode: 'upsert', key: 'order_no' });

/**
 * 6,000 orders, about 200 KB (several 64 KB file chunks): wrong field counts, amounts the
 * mapping refuses, repeated and empty keys, quoted line breaks (lines run ahead of indexes).
 */
function ordersCsv(rows = 6000): string {
  const lines = ['order,customer,amount,at'];
  for (let i = 0; i < rows; i++) {
    const customer = i % 89 === 0 ? `"Line\nbreak ${i}"` : `Customer ${i}`;
    if (i % 97 === 0) lines.push(`SO-${i},${customer},1,${i},extra`);
    else if (i % 101 === 0) lines.push(`SO-${i},${customer},abc,${i}`);
    else if (i % 211 === 0) lines.push(`SO-${i - 1},${customer},2,${i}`);
    else if (i % 307 === 0) lines.push(`,${customer},3,${i}`);
    else lines.push(`SO-${i},${customer},${i % 1000},${i}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Open file descriptors of this process (Linux): a read must close its file however it ends. */
const openFiles = () => readdirSync('/proc/self/fd').length;
async function settledOpenFiles(before: number): Promise<number> {
  // A destroyed stream closes its descriptor asynchronously.
  for (let i = 0; i < 50 && openFiles() > before; i++) await new Promise((r) => setTimeout(r, 10));
  return openFiles();
}

/** The source a run reads: the csv source behind the column check. */
function runSource(spec: Omit<CsvSourceSpec, 'type'>, deps: Partial<SourceDeps> = {}, mapped = mappings) {
  const csv: CsvSourceSpec = { type: 'csv', ...spec };
  return checkSourceColumns(
    'orders',
    csv,
    mapped,
    createSource(csv, { env: {}, baseDir: tmp.dir, cursorField: 'at', ...deps }),
  );
}

/** `source` one record at a time only: its chunk method hidden. */
function perRecord<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => source[Symbol.asyncIterator]() };
}

/** `source` with a count of how often its chunk method was asked for. */
function counted(source: AsyncIterable<SourceItem>): {
  source: AsyncIterable<SourceItem>;
  chunkReads: () => number;
} {
  if (!hasRecordChunks(source)) throw new Error('expected a source with chunks');
  let calls = 0;
  return {
    source: {
      [Symbol.asyncIterator]: () => source[Symbol.asyncIterator](),
      [recordChunks]: () => {
        calls += 1;
        return source[recordChunks]();
      },
    } as AsyncIterable<SourceItem>,
    chunkReads: () => calls,
  };
}

type Event =
  | ['rejected', number, number | undefined, string]
  | ['batch', ReadProgress, Array<[number, number | undefined, string | undefined]>];

/** Everything readBatches hands out, in the order it does. */
async function drain(
  source: AsyncIterable<SourceRecord>,
  batchSize = 7,
): Promise<{ events: Event[]; progress: ReadProgress }> {
  const events: Event[] = [];
  const progress: ReadProgress = { read: 0, cursor: undefined };
  for await (const rows of readBatches(source, {
    plan,
    batchSize,
    progress,
    onRejected: (records) => {
      for (const r of records) events.push(['rejected', r.index, r.source.position.line, r.failure.message]);
      return Promise.resolve();
    },
  })) {
    events.push(['batch', { ...progress }, rows.map((r) => [r.index, r.source.position.line, r.mapped.key])]);
  }
  return { events, progress };
}

describe('readBatches over a csv source read a chunk at a time', () => {
  it('gives the records, rejections, batches and progress of the one-at-a-time read', async () => {
    await tmp.write('orders.csv', ordersCsv());
    for (const deps of [{}, { since: '1500' }, { env: { ROWBRIDGE_DATA_DIR: tmp.dir } }]) {
      const { source, chunkReads } = counted(runSource({ path: 'orders.csv' }, deps));
      const chunked = await drain(source);
      expect(chunkReads()).toBe(1);
      const single = await drain(perRecord(runSource({ path: 'orders.csv' }, deps)));
      expect(chunked).toEqual(single);
      // Not two equally empty reads: every kind of record is there.
      const messages = chunked.events.filter((e) => e[0] === 'rejected').map((e) => e[3]);
      expect(messages.some((m) => m.includes('5 fields, but the header has 4'))).toBe(true);
      expect(messages.some((m) => m.startsWith('amount (column amount)'))).toBe(true);
      expect(messages.some((m) => m.startsWith('duplicate key order_no'))).toBe(true);
      expect(messages.some((m) => m.includes('the key field is empty'))).toBe(true);
      // Past the cursor: 4,499 records, and the 16 of wrong length before it (no cursor can be read from them).
      expect(chunked.progress.read).toBe('since' in deps ? 4515 : 6000);
      expect(chunked.progress.cursor).toBe('5999');
    }
  });

  it('keeps ordinals shifted for a backfill chunk (offsetIndexes), a chunk at a time as one by one', async () => {
    await tmp.write('orders.csv', ordersCsv());
    const { source, chunkReads } = counted(runSource({ path: 'orders.csv' }));
    const chunked = await drain(offsetIndexes(source, 1_000_000));
    expect(chunkReads()).toBe(1);
    const single = await drain(offsetIndexes(perRecord(runSource({ path: 'orders.csv' })), 1_000_000));
    expect(chunked).toEqual(single);
    const first = chunked.events.find((e) => e[0] === 'batch')!;
    expect(first[2][0]![0]).toBe(1_000_001);
  });

  it('closes the file when the reader stops after the first batch', async () => {
    await tmp.write('orders.csv', ordersCsv());
    const before = openFiles();
    const { source, chunkReads } = counted(runSource({ path: 'orders.csv' }));
    const progress: ReadProgress = { read: 0, cursor: undefined };
    for await (const rows of readBatches(source, {
      plan,
      batchSize: 50,
      progress,
      onRejected: () => Promise.resolve(),
    })) {
      expect(rows).toHaveLength(50);
      break;
    }
    expect(chunkReads()).toBe(1);
    expect(progress.read).toBeLessThan(6000);
    expect(await settledOpenFiles(before)).toBe(before);
  });

  it('a mapped column the file lacks: a config error, nothing handed out, the file closed', async () => {
    await tmp.write('orders.csv', ordersCsv());
    const before = openFiles();
    const typo = mappings.map((m) => (m.from === 'amount' ? { ...m, from: 'amout' } : m));
    const { source, chunkReads } = counted(runSource({ path: 'orders.csv' }, {}, typo));
    const handed: unknown[] = [];
    const err = await rejection(
      (async () => {
        for await (const rows of readBatches(source, {
          plan,
          batchSize: 1,
          progress: { read: 0, cursor: undefined },
          onRejected: (records) => Promise.resolve(void handed.push(...records)),
        }))
          handed.push(...rows);
      })(),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/amount: \{ from: amout \}: no such column \(did you mean "amount"\?\)/);
    expect(chunkReads()).toBe(1);
    expect(handed).toEqual([]);
    expect(await settledOpenFiles(before)).toBe(before);
  });

  it('an abort mid-read ends it with the abort, within a chunk of records, and closes the file', async () => {
    await tmp.write('many.csv', ordersCsv(60_000));
    const before = openFiles();
    const controller = new AbortController();
    const { source, chunkReads } = counted(runSource({ path: 'many.csv' }, { signal: controller.signal }));
    const progress: ReadProgress = { read: 0, cursor: undefined };
    let readAtAbort = 0;
    const err = await rejection(
      (async () => {
        for await (const _ of readBatches(source, {
          plan,
          batchSize: 100,
          progress,
          onRejected: () => Promise.resolve(),
        })) {
          if (readAtAbort === 0) {
            readAtAbort = progress.read;
            controller.abort(new Error('worker stopping'));
            // The abort lands while the consumer is busy, as a batch job's add does.
            await new Promise((r) => setImmediate(r));
          }
        }
      })(),
    );
    expect(err.message).toBe('worker stopping');
    expect(chunkReads()).toBe(1);
    // At most the rest of the chunk in hand (a 64 KB chunk holds ~2,000 of these records).
    expect(progress.read - readAtAbort).toBeLessThan(5000);
    expect(await settledOpenFiles(before)).toBe(before);
  });
});
