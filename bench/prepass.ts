/**
 * Cost of reading a file source through before a run writes anything (src/sync/
 * file-prepass.ts: for a CSV file, the scanner of sources/csv-count.ts, whose decoding is
 * the UTF-8 check; csv-parse only where the scanner is not sure), side by side with its
 * baseline in the same run: one read of the same file by the csv source, which every run
 * does anyway. `prepassOverBaseline` is the pre-pass's time over that read's time.
 *
 * Usage: node bench/prepass.ts [--rows 1000000] [--repeats 3]
 * Prints one JSON object on stdout; the best of `repeats` runs of each.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { prepassFileSource } from '../src/sync/read/file-prepass.ts';
import { createSource } from '../src/sync/sources/create-source.ts';
import type { SourceSpec } from '../src/sync/sources/source-spec.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { writeOrdersCsv } from './lib/orders-fixture.ts';

const flags = parseNumberFlags('bench/prepass.ts', { rows: { default: 1_000_000 }, repeats: { default: 3 } });
const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-prepass-'));
try {
  const bytes = await writeOrdersCsv(path.join(dir, 'orders.csv'), flags.rows);
  const spec: SourceSpec = { type: 'csv', path: './orders.csv' };
  const deps = { env: {}, baseDir: dir };

  const best = async (fn: () => Promise<unknown>): Promise<number> => {
    let fastest = Infinity;
    for (let i = 0; i < flags.repeats; i++) {
      const started = performance.now();
      await fn();
      fastest = Math.min(fastest, performance.now() - started);
    }
    return fastest;
  };
  let parsed = 0;
  const baselineMs = await best(async () => {
    parsed = 0;
    for await (const _item of createSource(spec, deps)) parsed += 1;
  });
  let counted = 0;
  const prepassMs = await best(async () => {
    counted = (await prepassFileSource(spec, deps))?.records ?? 0;
  });
  console.log(
    JSON.stringify(
      {
        bench: 'prepass',
        rows: flags.rows,
        fileMiB: Number((bytes / 1024 / 1024).toFixed(1)),
        baselineParseMs: Math.round(baselineMs),
        prepassMs: Math.round(prepassMs),
        prepassOverBaseline: Number((prepassMs / baselineMs).toFixed(2)),
        recordsAgree: parsed === flags.rows && counted === flags.rows,
        loadAverage: Number(loadavg()[0]!.toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
