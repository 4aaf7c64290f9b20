/**
 * Rows/s of a throttled run as a share of its ceiling (issue #4; targets of issue 12:
 * at least 0.98 of the ceiling, at most 1% of requests answered 51, over 60,000 rows).
 *
 * The emulator runs in a child process with a per-credential token bucket of `--rate`
 * requests/s and `--burst` tokens; past it, it answers error 51. rowbridge imports
 * `--rows` orders rows in append mode with `--batch-size` rows per write, through the
 * real queue path, its budget starting ABOVE the limit (ROWBRIDGE_RATE=`--initial-rate`,
 * ROWBRIDGE_MAX_RATE=`--max-rate`), so the adaptive limiter has to find the real limit
 * from the 51 answers it provokes.
 *
 * How to read it: the ceiling is rate × batchSize rows/s, what a client that knew the
 * limit and never wasted a request would reach. `shareOfCeiling` = rowsPerSec / ceiling:
 * 1 is perfect (the burst and a short run can push it slightly above), the gap is the
 * price of probing (51 answers, the 1 s pause after each, the time the server's window
 * sits full) plus the run's start (reading the structure, fanning out batches).
 * `runSeconds`/`runShareOfCeiling` use the run's own start and finish times instead of
 * enqueue-to-seen. `throttledAnswers`, `requests` and `throttledShare` are counted by the
 * emulator, so they hold whatever rowbridge's own report says.
 *
 * `--learn-rows N` (issue 24 §6) runs the job once on N rows first, then deletes the
 * shared budget as its 10 min idle expiry would and keeps the rate it learned: the
 * measured run is the next run of an hourly job. `learnRun` holds the first run's figures.
 *
 * Usage: node bench/throttled.ts [--rows 60000] [--batch-size 100] [--rate 10] [--burst 10]
 *        [--initial-rate 20] [--max-rate 50] [--concurrency 4] [--learn-rows 0] [--timeout-s 1800]
 * Prints one JSON object on stdout; logs go to stderr.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { benchEnv } from './lib/bench-env.ts';
import { createOrdersFixture, writeOrdersCsv } from './lib/orders-fixture.ts';
import { runQueuedJob } from './lib/run-queued-job.ts';
import { spawnEmulator } from './lib/spawn-emulator.ts';
import { ceilingFigures, throttledFlags } from './lib/throttled-figures.ts';
import type { EmulatorProcessStats } from './lib/emulator-process.ts';
import { expireBudgets, statsSince } from './lib/learned-budget.ts';

const flags = throttledFlags('bench/throttled.ts', {
  concurrency: { default: 4 },
  'learn-rows': { default: 0, min: 0 },
  'timeout-s': { default: 1800 },
});
const learnRows = flags['learn-rows'];
const rows = flags.rows;
const batchSize = flags['batch-size'];
const { rate, burst, concurrency } = flags;
const JOB = 'bench-throttled';

const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-throttled-'));
const fixture = createOrdersFixture();
const emulator = await spawnEmulator({
  worksheet: fixture.worksheet,
  rateLimit: { requestsPerSecond: rate, burst },
});
try {
  await writeOrdersCsv(path.join(dir, 'orders.csv'), rows);
  await writeFile(
    path.join(dir, `${JOB}.yaml`),
    fixture.jobYaml({ jobName: JOB, batchSize, csvPath: './orders.csv' }),
  );
  const env = benchEnv(emulator, 'throttled', { initial: flags['initial-rate'], max: flags['max-rate'] });
  const queued = { env, jobsDir: dir, concurrency, timeoutMs: flags['timeout-s'] * 1000 };
  let learnRun: ReturnType<typeof ceilingFigures> | undefined;
  let before: EmulatorProcessStats | undefined;
  if (learnRows > 0) {
    await writeOrdersCsv(path.join(dir, 'learn.csv'), learnRows);
    await writeFile(
      path.join(dir, `${JOB}-learn.yaml`),
      fixture.jobYaml({ jobName: `${JOB}-learn`, batchSize, csvPath: './learn.csv' }),
    );
    const first = await runQueuedJob({ ...queued, jobName: `${JOB}-learn`, keepKeys: true });
    learnRun = ceilingFigures(first, await emulator.stats(), { rows: learnRows, batchSize, rate });
    await expireBudgets(env);
    before = await emulator.stats();
  }
  const run = await runQueuedJob({ ...queued, jobName: JOB });
  const total = await emulator.stats();
  const landed = before === undefined ? total : statsSince(total, before);
  const verified =
    run.record.status === 'completed' && landed.rowCount === rows + learnRows && run.report.created === rows;
  if (!verified) {
    console.error(
      `NOT VERIFIED: run ${run.record.status}${run.record.message === undefined ? '' : ` (${run.record.message})`}, ` +
        `worksheet holds ${landed.rowCount} of ${rows} rows, report says created ${run.report.created}, dead-lettered ${run.report.deadLetteredTotal}`,
    );
    process.exitCode = 1;
  }
  const figures = ceilingFigures(run, landed, { rows, batchSize, rate });
  process.stdout.write(
    `${JSON.stringify({
      rows,
      ...figures,
      batchSize,
      rate,
      burst,
      initialRate: flags['initial-rate'],
      maxRate: flags['max-rate'],
      concurrency,
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
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
}
