/**
 * bench/throttled.ts with the run's batches shared by `--workers` worker PROCESSES that
 * share one budget through Redis (issue 12), as two deployed `rowbridge worker`s with
 * the same credential do.
 *
 * The emulator runs in a child process, limited to `--rate` requests/s per credential
 * with `--burst` tokens (error 51 past it). Each worker is a child process
 * (bench/lib/queue-worker-process.ts: a runtime and its BullMQ workers, `--concurrency`
 * batch jobs at once); this process only enqueues the run and waits for it to end. The
 * budget starts above the limit (ROWBRIDGE_RATE=`--initial-rate`), so the workers have to
 * find the limit together from the 51 answers either of them provokes.
 *
 * How to read it: as bench/throttled.ts. `shareOfCeiling` = rowsPerSec / (rate ×
 * batchSize); `throttledShare` = throttled answers / requests, both counted by the
 * emulator. `perWorkerRequests` shows that both processes took part.
 *
 * `--learn-rows N` (issue 24 §6): a first run of N rows, then the shared budget deleted as
 * its idle expiry would, keeping the rate it learned; figures are the second run's,
 * `learnRun` the first's (as bench/throttled.ts).
 *
 * Usage: node bench/throttled-shared.ts [--rows 60000] [--batch-size 100] [--rate 10]
 *        [--burst 10] [--initial-rate 20] [--max-rate 50] [--workers 2] [--concurrency 4]
 *        [--learn-rows 0] [--timeout-s 1800]
 * Prints one JSON object on stdout; logs go to stderr.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv } from './lib/bench-env.ts';
import { createOrdersFixture, writeOrdersCsv } from './lib/orders-fixture.ts';
import type { QueueWorkerStart, QueueWorkerStats } from './lib/queue-worker-process.ts';
import { deleteQueueKeys, runEnqueuedJob } from './lib/run-enqueued-job.ts';
import { spawnEmulator } from './lib/spawn-emulator.ts';
import { spawnJsonChild } from './lib/spawn-json-child.ts';
import type { JsonChild } from './lib/spawn-json-child.ts';
import { ceilingFigures, throttledFlags } from './lib/throttled-figures.ts';
import type { EmulatorProcessStats } from './lib/emulator-process.ts';
import { expireBudgets, statsSince } from './lib/learned-budget.ts';

const flags = throttledFlags('bench/throttled-shared.ts', {
  workers: { default: 2 },
  concurrency: { default: 4 },
  'learn-rows': { default: 0, min: 0 },
  'timeout-s': { default: 1800 },
});
const learnRows = flags['learn-rows'];
const rows = flags.rows;
const batchSize = flags['batch-size'];
const { rate, burst, concurrency } = flags;
const JOB = 'bench-throttled-shared';
const WORKER = fileURLToPath(new URL('./lib/queue-worker-process.ts', import.meta.url));

const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-throttled-shared-'));
const fixture = createOrdersFixture();
const emulator = await spawnEmulator({
  worksheet: fixture.worksheet,
  rateLimit: { requestsPerSecond: rate, burst },
});
const workers: JsonChild<{ pid: number }>[] = [];
let env: NodeJS.ProcessEnv | undefined;
try {
  await writeOrdersCsv(path.join(dir, 'orders.csv'), rows);
  await writeFile(
    path.join(dir, `${JOB}.yaml`),
    fixture.jobYaml({ jobName: JOB, batchSize, csvPath: './orders.csv' }),
  );
  env = benchEnv(emulator, 'throttled-shared', {
    initial: flags['initial-rate'],
    max: flags['max-rate'],
  });
  for (let i = 0; i < flags.workers; i += 1) workers.push(await spawnJsonChild<{ pid: number }>(WORKER));
  const start: QueueWorkerStart = { cmd: 'start', env, jobsDir: dir, concurrency };
  for (const worker of workers) await worker.ask(start);

  const timeoutMs = flags['timeout-s'] * 1000;
  const workerStats = () => Promise.all(workers.map((w) => w.ask<QueueWorkerStats>({ cmd: 'stats' })));
  let learnRun: ReturnType<typeof ceilingFigures> | undefined;
  let before: EmulatorProcessStats | undefined;
  let workersBefore: QueueWorkerStats[] | undefined;
  if (learnRows > 0) {
    await writeOrdersCsv(path.join(dir, 'learn.csv'), learnRows);
    await writeFile(
      path.join(dir, `${JOB}-learn.yaml`),
      fixture.jobYaml({ jobName: `${JOB}-learn`, batchSize, csvPath: './learn.csv' }),
    );
    const first = await runEnqueuedJob({ env, jobsDir: dir, jobName: `${JOB}-learn`, timeoutMs });
    learnRun = ceilingFigures(first, await emulator.stats(), { rows: learnRows, batchSize, rate });
    await expireBudgets(env);
    before = await emulator.stats();
    workersBefore = await workerStats();
  }
  const run = await runEnqueuedJob({ env, jobsDir: dir, jobName: JOB, timeoutMs });
  const perWorker = (await workerStats()).map((w, i) => ({
    requests: w.requests - (workersBefore?.[i]?.requests ?? 0),
    throttled: w.throttled - (workersBefore?.[i]?.throttled ?? 0),
  }));
  const total = await emulator.stats();
  const landed = before === undefined ? total : statsSince(total, before);
  const verified =
    run.record.status === 'completed' &&
    landed.rowCount === rows + learnRows &&
    run.report.created === rows &&
    perWorker.every((w) => w.requests > 0);
  if (!verified) {
    console.error(
      `NOT VERIFIED: run ${run.record.status}${run.record.message === undefined ? '' : ` (${run.record.message})`}, ` +
        `worksheet holds ${landed.rowCount} of ${rows} rows, report says created ${run.report.created}, ` +
        `requests per worker ${perWorker.map((w) => w.requests).join('/')}`,
    );
    process.exitCode = 1;
  }
  const figures = ceilingFigures(run, landed, { rows, batchSize, rate });
  process.stdout.write(
    `${JSON.stringify({
      rows,
      workers: flags.workers,
      ...figures,
      perWorkerRequests: perWorker.map((w) => w.requests),
      perWorkerThrottled: perWorker.map((w) => w.throttled),
      batchSize,
      rate,
      burst,
      initialRate: flags['initial-rate'],
      maxRate: flags['max-rate'],
      concurrencyPerWorker: concurrency,
      ...(learnRun === undefined ? {} : { learnRows, learnRun }),
      verified,
      status: run.record.status,
      worksheetRows: landed.rowCount,
      report: {
        requests: run.report.requests,
        throttled: run.report.throttled,
        retries: run.report.retries,
        deadLettered: run.report.deadLetteredTotal,
      },
      loadAverage1m: Math.round(loadavg()[0]! * 10) / 10,
    })}\n`,
  );
} finally {
  for (const worker of workers) await worker.close();
  if (env !== undefined) await deleteQueueKeys(env);
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
}
