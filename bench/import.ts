/**
 * Rows/s and peak RSS of a CSV import into the emulator, unthrottled (issue #4).
 *
 * Writes an orders CSV (order number, customer with quoted commas, amount, status among
 * four options in mixed case, DD/MM/YYYY date) to a temporary folder, starts the
 * emulator in a child process (bench/lib/emulator-process.ts) so that only rowbridge is
 * measured here, and runs an append job with batchSize 1000 (the maximum) through the
 * real queue path: runtime + workers in this process, enqueueRun, poll until the run
 * ends. Afterwards the emulator is asked how many rows the worksheet holds.
 *
 * How to read it: `rowsPerSec` = rows / seconds from enqueue to the run being seen as
 * ended (CSV parsing, mapping, BullMQ fan-out through Redis, per-row outcome bookkeeping,
 * HTTP writes; the emulator's own work runs on the other core). `peakRssMb` is the
 * highest RSS of this process sampled every 100 ms during the run, `maxRssMb` the
 * kernel's high-water mark for the process's life; flat memory from 100k to 1M rows
 * means the import streams. `verified: true` means the worksheet ended with exactly
 * `rows` rows. `requests` is what the emulator received (structure reads included).
 *
 * Usage: node bench/import.ts [--rows 100000] [--batch-size 1000] [--concurrency 4] [--timeout-s 3600]
 * Full size: --rows 1000000. Prints one JSON object on stdout; logs go to stderr.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { benchEnv } from './lib/bench-env.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { createOrdersFixture, writeOrdersCsv } from './lib/orders-fixture.ts';
import { runQueuedJob } from './lib/run-queued-job.ts';
import { startRssSampler } from './lib/rss-sampler.ts';
import { spawnEmulator } from './lib/spawn-emulator.ts';

const flags = parseNumberFlags('bench/import.ts', {
  rows: { default: 100_000 },
  'batch-size': { default: 1000 },
  concurrency: { default: 4 },
  'timeout-s': { default: 3600 },
});
const rows = flags.rows;
const batchSize = flags['batch-size'];
const { concurrency } = flags;
const JOB = 'bench-import';

const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-import-'));
const fixture = createOrdersFixture();
const emulator = await spawnEmulator({ worksheet: fixture.worksheet });
try {
  const csvStarted = performance.now();
  const csvBytes = await writeOrdersCsv(path.join(dir, 'orders.csv'), rows);
  console.error(
    `wrote ${rows} rows (${(csvBytes / 1024 / 1024).toFixed(1)} MiB) in ${((performance.now() - csvStarted) / 1000).toFixed(1)} s`,
  );
  await writeFile(
    path.join(dir, `${JOB}.yaml`),
    fixture.jobYaml({ jobName: JOB, batchSize, csvPath: './orders.csv' }),
  );

  // Unthrottled: the emulator has no limit and the budget must not pace either.
  const env = benchEnv(emulator, 'import', { initial: 1000, max: 1000 });
  const sampler = startRssSampler(100);
  const cpu0 = process.cpuUsage();
  const run = await runQueuedJob({
    env,
    jobsDir: dir,
    jobName: JOB,
    concurrency,
    timeoutMs: flags['timeout-s'] * 1000,
  });
  const cpu = process.cpuUsage(cpu0);
  const memory = sampler.stop();
  const landed = await emulator.stats();
  const verified =
    run.record.status === 'completed' && landed.rowCount === rows && run.report.created === rows;
  if (!verified) {
    console.error(
      `NOT VERIFIED: run ${run.record.status}${run.record.message === undefined ? '' : ` (${run.record.message})`}, ` +
        `worksheet holds ${landed.rowCount} of ${rows} rows, report says created ${run.report.created}, dead-lettered ${run.report.deadLetteredTotal}`,
    );
    process.exitCode = 1;
  }
  process.stdout.write(
    `${JSON.stringify({
      rows,
      seconds: Math.round(run.seconds * 100) / 100,
      rowsPerSec: Math.round(rows / run.seconds),
      peakRssMb: memory.peakRssMb,
      maxRssMb: memory.maxRssMb,
      startRssMb: memory.startRssMb,
      requests: landed.requests,
      batchSize,
      concurrency,
      verified,
      status: run.record.status,
      worksheetRows: landed.rowCount,
      created: run.report.created,
      deadLettered: run.report.deadLetteredTotal,
      reportRequests: run.report.requests,
      retries: run.report.retries,
      cpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 100) / 100,
      csvMb: Math.round((csvBytes / 1024 / 1024) * 10) / 10,
      loadAverage1m: Math.round(loadavg()[0]! * 10) / 10,
    })}\n`,
  );
} finally {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
}
