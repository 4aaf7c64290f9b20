/**
 * Rows/s and memory of a CSV import into the emulator, unthrottled (issues #4 and #12).
 *
 * Writes an orders CSV (order number, customer with quoted commas, amount, status among
 * four options in mixed case, DD/MM/YYYY date) to a temporary folder and starts the
 * emulator in a child process (bench/lib/emulator-process.ts) with two empty worksheets
 * of the same structure, one for each loader. Then, against that one emulator, in this
 * order:
 *   1. `rowbridge worker --no-schedules` is started and its RSS read once it has sat
 *      idle for 1.5 s, twice: `workerFirstStartRssMb` fills Node's compile cache when the
 *      sources changed, `workerStartRssMb` (what a worker costs before any work) finds it;
 *   2. the bare loader (bench/lib/bare-loader.ts: csv-parse + undici, no queue) posts the
 *      same rows in the same batches at the same concurrency (`bareRowsPerSec`);
 *   3. `node bin/rowbridge.js run JOB --json` imports the file through the real queue
 *      path (append, batchSize 1000) as its own process, its RSS sampled from /proc
 *      every 50 ms with the kernel's high-water mark (`peakRssMb`).
 * Until session 5 both wrote into one worksheet and the bare loader went first, so the
 * run wrote into the fuller one and paid the emulator's cost of a fuller worksheet alone.
 * One asymmetry is left: during the run the emulator still holds the bare loader's rows
 * (its heap, its garbage collections): it used 9.0 to 9.6 CPU-s for the run's 1M rows
 * against 8.6 to 8.9 for the bare loader's.
 *
 * How to read it: `rowsPerSec` = rows / wall time of the `run` process (start-up, the
 * file pre-pass, CSV parsing, mapping, BullMQ fan-out through Redis, per-row bookkeeping,
 * HTTP writes; the emulator's own work runs on the other core). `shareOfBare` =
 * rowsPerSec / bareRowsPerSec, measured seconds apart on the same emulator; on a machine
 * shared with other work both move with its load (seen: bare 34k to 159k rows/s), and
 * `cpuSeconds`, the run process's own CPU (user + system, from /proc), moves least: compare
 * it between versions. The two cores are shared by the run, the emulator and Redis:
 * `emulatorCpuSeconds` and `redisCpuSeconds` are theirs while the run ran
 * (`bareEmulatorCpuSeconds` the emulator's under the bare loader, `bareCpuSeconds` the bare
 * loader's own; Redis's from INFO cpu, so they include any other client of that Redis).
 * `limits` holds the targets of issue #12 and `withinLimits` whether each was met.
 * `verified: true` means each loader's worksheet holds exactly `rows` rows and the run
 * report says `rows` created.
 *
 * Usage: node bench/import.ts [--rows 100000] [--batch-size 1000] [--concurrency 4] [--timeout-s 3600]
 * Full size: --rows 1000000. Prints one JSON object on stdout; logs go to stderr
 * (BENCH_VERBOSE=1 passes the run's stderr through; BENCH_NODE_ARGS="--heap-prof" adds
 * node flags to the run process).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { bareLoad } from './lib/bare-loader.ts';
import { benchEnv } from './lib/bench-env.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { createOrdersFixture, writeOrdersCsv } from './lib/orders-fixture.ts';
import { measureWorkerStartRss, runRowbridgeChild } from './lib/rowbridge-child.ts';
import { spawnEmulator } from './lib/spawn-emulator.ts';

/** Issue #12's targets for the 1M-row import. */
const LIMITS = { peakRssMb: 200, workerStartRssMb: 80, rowsPerSec: 60_000, shareOfBare: 0.6 };

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
// The bare loader writes into a worksheet of its own, of the same structure: each loader
// writes into an empty one. The emulator's cost per row grows with the rows a worksheet
// holds (1M rows posted into one already holding 1M: 9.67 against 8.75 CPU-s, 111,198
// against 120,571 rows/s), which, when both wrote into one worksheet, the run paid alone.
const emulator = await spawnEmulator({
  worksheet: fixture.worksheet,
  moreWorksheets: [{ ...fixture.worksheet, name: 'Orders (bare loader)', alias: 'orders_bare' }],
});
const bareWorksheetId = emulator.moreWorksheetIds[0]!;
// Unthrottled: the emulator has no limit and the budget must not pace either.
const env = {
  ...process.env,
  ...benchEnv(emulator, 'import', { initial: 1000, max: 1000 }),
  ROWBRIDGE_JOBS_DIR: dir,
};
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
try {
  const csvStarted = performance.now();
  const csvFile = path.join(dir, 'orders.csv');
  const csvBytes = await writeOrdersCsv(csvFile, rows);
  console.error(
    `wrote ${rows} rows (${(csvBytes / 1024 / 1024).toFixed(1)} MiB) in ${((performance.now() - csvStarted) / 1000).toFixed(1)} s`,
  );
  await writeFile(
    path.join(dir, `${JOB}.yaml`),
    fixture.jobYaml({ jobName: JOB, batchSize, csvPath: './orders.csv' }),
  );

  // The first start after the sources changed fills Node's compile cache (bin/rowbridge.js);
  // every later start, the figure of a deployed worker, finds it filled.
  const workerFirstStartRssMb = await measureWorkerStartRss(env);
  const workerStartRssMb = await measureWorkerStartRss(env);
  console.error(
    `worker idle after start: ${workerStartRssMb} MiB (first start ${workerFirstStartRssMb} MiB)`,
  );

  const beforeBare = await emulator.stats();
  const bareCpuStart = process.cpuUsage();
  const bare = await bareLoad({ ...emulator, worksheetId: bareWorksheetId }, csvFile, {
    batchSize,
    concurrency,
  });
  const bareCpu = process.cpuUsage(bareCpuStart);
  const afterBare = await emulator.stats();
  console.error(`bare loader: ${rows} rows in ${bare.seconds.toFixed(2)} s`);

  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const redisBefore = await redisCpuSeconds(env);
  const run = await runRowbridgeChild({
    env,
    args: ['run', JOB, '--json', '--concurrency', String(concurrency)],
    nodeArgs,
  });
  const landed = await emulator.stats();
  const redisAfter = await redisCpuSeconds(env);
  const report = run.output?.report ?? {};
  const created = Number(report.created);
  const verified =
    run.output?.run?.status === 'completed' &&
    afterBare.moreRowCounts[0] === rows &&
    afterBare.rowCount === 0 &&
    landed.rowCount === rows &&
    landed.moreRowCounts[0] === rows &&
    created === rows;
  if (!verified) {
    console.error(
      `NOT VERIFIED: run exited ${String(run.exitCode)}, status ${String(run.output?.run?.status)} ` +
        `(${String(run.output?.run?.message)}), its worksheet holds ${landed.rowCount} rows and the bare ` +
        `loader's ${String(landed.moreRowCounts[0])} (${rows} expected in each), report says created ${created}\n` +
        run.stderrTail,
    );
    process.exitCode = 1;
  }
  const rowsPerSec = Math.round(rows / run.seconds);
  const bareRowsPerSec = Math.round(rows / bare.seconds);
  const figures = {
    peakRssMb: run.peakRssMb,
    workerStartRssMb,
    rowsPerSec,
    shareOfBare: round(rowsPerSec / bareRowsPerSec, 3),
  };
  process.stdout.write(
    `${JSON.stringify({
      rows,
      seconds: round(run.seconds, 2),
      ...figures,
      workerFirstStartRssMb,
      bareRowsPerSec,
      bareSeconds: round(bare.seconds, 2),
      limits: LIMITS,
      withinLimits: {
        peakRssMb: figures.peakRssMb <= LIMITS.peakRssMb,
        workerStartRssMb: figures.workerStartRssMb <= LIMITS.workerStartRssMb,
        rowsPerSec: figures.rowsPerSec >= LIMITS.rowsPerSec,
        shareOfBare: figures.shareOfBare >= LIMITS.shareOfBare,
      },
      cpuSeconds: run.cpuSeconds,
      emulatorCpuSeconds: round(landed.cpuSeconds - afterBare.cpuSeconds, 2),
      redisCpuSeconds: round(redisAfter - redisBefore, 2),
      bareCpuSeconds: round((bareCpu.user + bareCpu.system) / 1e6, 2),
      bareEmulatorCpuSeconds: round(afterBare.cpuSeconds - beforeBare.cpuSeconds, 2),
      requests: landed.requests - afterBare.requests,
      bareRequests: bare.requests,
      batchSize,
      concurrency,
      verified,
      status: run.output?.run?.status,
      created,
      deadLettered: report.deadLetteredTotal,
      reportRequests: report.requests,
      retries: report.retries,
      csvMb: round(csvBytes / 1024 / 1024),
      loadAverage1m: round(loadavg()[0]!),
    })}\n`,
  );
} finally {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
  await deletePrefix(env);
}

/** CPU the Redis server has used so far (user + system, its INFO cpu section). */
async function redisCpuSeconds(runEnv: NodeJS.ProcessEnv): Promise<number> {
  const redis = new Redis(runEnv.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 3 });
  try {
    const info = await redis.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN);
    return field('used_cpu_user') + field('used_cpu_sys');
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

/** Every key of this run's queue prefix (the `run` child leaves its queue and state). */
async function deletePrefix(runEnv: NodeJS.ProcessEnv): Promise<void> {
  const redis = new Redis(runEnv.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${runEnv.ROWBRIDGE_QUEUE_PREFIX}:*`,
        'COUNT',
        1000,
      );
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit().catch(() => undefined);
  }
}
