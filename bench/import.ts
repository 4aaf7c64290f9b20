/**
 * Rows/s and memory of a CSV import into the emulator, unthrottled (issues #4 and #12).
 *
 * Writes an orders CSV (order number, customer with quoted commas, amount, status among
 * four options in mixed case, DD/MM/YYYY date) to a temporary folder and starts the
 * emulator in a child process (bench/lib/emulator-process.ts) with two empty worksheets
 * of the same structure, one for each loader. Then, against that one emulator, in this
 * order (step 1 in the first round only):
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
 * The run's memory mode is ROWBRIDGE_MEMORY as this bench is given it: `lean` (the default,
 * a bounded heap) or `fast` (`ROWBRIDGE_MEMORY=fast node bench/import.ts ...`); glibc's
 * malloc runs as docs/deployment.md sets it (bench/lib/bench-env.ts). `memory` and
 * `mallocArenaMax` in the output say which it ran.
 *
 * `--repeat N` runs N rounds (steps 2 and 3, each round against a fresh emulator child)
 * and prints the median of each figure, every round's in `rounds`: on two shared cores
 * one round's rows/s moves by 10% from run to run.
 *
 * Usage: node bench/import.ts [--rows 100000] [--batch-size 1000] [--concurrency 4] [--repeat 1] [--timeout-s 3600]
 * Full size: --rows 1000000. Prints one JSON object on stdout; logs go to stderr
 * (BENCH_VERBOSE=1 passes the run's stderr through; BENCH_NODE_ARGS="--heap-prof" adds
 * node flags to the run process).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { readSetting } from '../config/settings.ts';
import { bareLoad } from './lib/bare-loader.ts';
import { benchEnv, mallocEnv } from './lib/bench-env.ts';
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
  repeat: { default: 1 },
});
const rows = flags.rows;
const batchSize = flags['batch-size'];
const { concurrency, repeat } = flags;
const JOB = 'bench-import';

/** A glibc malloc variable as the run has it (bench-env.ts sets them as a deployment does). */
function mallocSetting(name: string): string {
  return mallocEnv()[name] ?? 'unset';
}

const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-import-'));
const fixture = createOrdersFixture();
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** What one round measured: a bare load and a run, each into an empty worksheet. */
interface RoundFigures {
  seconds: number;
  rowsPerSec: number;
  bareRowsPerSec: number;
  bareSeconds: number;
  shareOfBare: number;
  peakRssMb: number;
  cpuSeconds: number | undefined;
  emulatorCpuSeconds: number;
  redisCpuSeconds: number;
  bareCpuSeconds: number;
  bareEmulatorCpuSeconds: number;
  requests: number;
  bareRequests: number;
  verified: boolean;
  status: unknown;
  created: number;
  deadLettered: unknown;
  reportRequests: unknown;
  retries: unknown;
}

/**
 * One round against a fresh emulator child (its memory and garbage collections start
 * from nothing each round). The bare loader writes into a worksheet of its own, of the
 * same structure: each loader writes into an empty one. The emulator's cost per row
 * grows with the rows a worksheet holds (1M rows posted into one already holding 1M:
 * 9.67 against 8.75 CPU-s, 111,198 against 120,571 rows/s), which, when both wrote into
 * one worksheet, the run paid alone. `measureStart` also measures the idle worker.
 */
async function oneRound(
  csvFile: string,
  measureStart: boolean,
): Promise<RoundFigures & { workerStartRssMb?: number; workerFirstStartRssMb?: number }> {
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
  try {
    let start: { workerStartRssMb: number; workerFirstStartRssMb: number } | undefined;
    if (measureStart) {
      // The first start after the sources changed fills Node's compile cache
      // (bin/rowbridge.js); every later start, the figure of a deployed worker, finds it filled.
      const workerFirstStartRssMb = await measureWorkerStartRss(env);
      const workerStartRssMb = await measureWorkerStartRss(env);
      console.error(
        `worker idle after start: ${workerStartRssMb} MiB (first start ${workerFirstStartRssMb} MiB)`,
      );
      start = { workerStartRssMb, workerFirstStartRssMb };
    }

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
    console.error(`rowbridge run: ${rows} rows in ${run.seconds.toFixed(2)} s`);
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
    return {
      ...start,
      seconds: round(run.seconds, 2),
      rowsPerSec,
      bareRowsPerSec,
      bareSeconds: round(bare.seconds, 2),
      shareOfBare: round(rowsPerSec / bareRowsPerSec, 3),
      peakRssMb: run.peakRssMb,
      cpuSeconds: run.cpuSeconds,
      emulatorCpuSeconds: round(landed.cpuSeconds - afterBare.cpuSeconds, 2),
      redisCpuSeconds: round(redisAfter - redisBefore, 2),
      bareCpuSeconds: round((bareCpu.user + bareCpu.system) / 1e6, 2),
      bareEmulatorCpuSeconds: round(afterBare.cpuSeconds - beforeBare.cpuSeconds, 2),
      requests: landed.requests - afterBare.requests,
      bareRequests: bare.requests,
      verified,
      status: run.output?.run?.status,
      created,
      deadLettered: report.deadLetteredTotal,
      reportRequests: report.requests,
      retries: report.retries,
    };
  } finally {
    await emulator.close();
    await deletePrefix(env);
  }
}

/** The median of the rounds' figures (the middle one, or the mean of the two middle ones). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

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

  const rounds: RoundFigures[] = [];
  let start: { workerStartRssMb: number; workerFirstStartRssMb: number } | undefined;
  for (let r = 0; r < repeat; r++) {
    const { workerStartRssMb, workerFirstStartRssMb, ...figures } = await oneRound(csvFile, r === 0);
    if (workerStartRssMb !== undefined && workerFirstStartRssMb !== undefined)
      start = { workerStartRssMb, workerFirstStartRssMb };
    rounds.push(figures);
  }
  // One round: its figures. Several: the median of each, and every round in `rounds`.
  const med = (pick: (f: RoundFigures) => number | undefined, digits: number): number =>
    round(median(rounds.map((f) => pick(f) ?? Number.NaN)), digits);
  const figures = {
    peakRssMb: med((f) => f.peakRssMb, 1),
    workerStartRssMb: start!.workerStartRssMb,
    rowsPerSec: med((f) => f.rowsPerSec, 0),
    shareOfBare: med((f) => f.shareOfBare, 3),
  };
  const last = rounds.at(-1)!;
  process.stdout.write(
    `${JSON.stringify({
      rows,
      // The run's memory mode (README, Scale out), from ROWBRIDGE_MEMORY as this bench was given it.
      memory: readSetting('memory', process.env),
      // glibc's malloc settings the run had: as a deployment sets them (bench/lib/bench-env.ts), or as given.
      mallocArenaMax: mallocSetting('MALLOC_ARENA_MAX'),
      mallocMmapThreshold: mallocSetting('MALLOC_MMAP_THRESHOLD_'),
      seconds: med((f) => f.seconds, 2),
      ...figures,
      workerFirstStartRssMb: start!.workerFirstStartRssMb,
      bareRowsPerSec: med((f) => f.bareRowsPerSec, 0),
      bareSeconds: med((f) => f.bareSeconds, 2),
      limits: LIMITS,
      withinLimits: {
        peakRssMb: figures.peakRssMb <= LIMITS.peakRssMb,
        workerStartRssMb: figures.workerStartRssMb <= LIMITS.workerStartRssMb,
        rowsPerSec: figures.rowsPerSec >= LIMITS.rowsPerSec,
        shareOfBare: figures.shareOfBare >= LIMITS.shareOfBare,
      },
      cpuSeconds: med((f) => f.cpuSeconds, 2),
      emulatorCpuSeconds: med((f) => f.emulatorCpuSeconds, 2),
      redisCpuSeconds: med((f) => f.redisCpuSeconds, 2),
      bareCpuSeconds: med((f) => f.bareCpuSeconds, 2),
      bareEmulatorCpuSeconds: med((f) => f.bareEmulatorCpuSeconds, 2),
      requests: last.requests,
      bareRequests: last.bareRequests,
      batchSize,
      concurrency,
      verified: rounds.every((f) => f.verified),
      status: last.status,
      created: last.created,
      deadLettered: last.deadLettered,
      reportRequests: last.reportRequests,
      retries: last.retries,
      csvMb: round(csvBytes / 1024 / 1024),
      loadAverage1m: round(loadavg()[0]!),
      ...(repeat > 1
        ? {
            rounds: rounds.map((f) => ({
              rowsPerSec: f.rowsPerSec,
              shareOfBare: f.shareOfBare,
              bareRowsPerSec: f.bareRowsPerSec,
              cpuSeconds: f.cpuSeconds,
              peakRssMb: f.peakRssMb,
              verified: f.verified,
            })),
          }
        : {}),
    })}\n`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
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
