/**
 * A quiet two-way run over many linked records (issue 25): what a run costs when nothing
 * changed on either side.
 *
 * A PostgreSQL table in a schema of its own (`twbench_<pid>`, dropped afterwards) holds
 * `--rows` contacts, with a trigger counting every row written and one moving
 * `updated_at` on each update; the emulator runs in a child process
 * (bench/lib/emulator-process.ts) with an empty worksheet. Then, each `node bin/rowbridge.js
 * run JOB --json` as its own process:
 *   1. the first run creates every record in the worksheet and links it (`firstRun`);
 *   2. after the cursor margin, a run reads back the rows its own writes moved and
 *      writes nothing (`secondRun`);
 *   3. after the margin again, the quiet run (`quiet`): its read requests (every request
 *      the emulator received, the worksheet structure included), the worksheet's write
 *      requests and the table's written rows (both must be 0), the records it read whole
 *      (`readWhole`, from the run's two-way report) and its peak RSS (from /proc, every 50 ms).
 * `redis` is the job's two-way state (links, row index, cursors) after the quiet run:
 * the MEMORY USAGE of each of its keys, summed, and per linked record.
 *
 * How to read it: a quiet run reads the worksheet's keys (one list request per 1,000
 * rows, only the key field), one changed-rows request, and the table's keys; its memory
 * holds the links (one per record) and both sides' keys. `readRequestsPerThousandRows`
 * should stay near 1. Wall time moves with the machine's load; requests and bytes do not.
 *
 * With `--hashed 1` the job has no `updatedAtColumn`: the table is read by row hash (a
 * short hash of the mapped columns per record, kept in Redis), which the quiet run also
 * holds in memory.
 *
 * Usage: node bench/two-way.ts [--rows 100000] [--hashed 0|1] [--timeout-s 3600]
 * Needs Redis (REDIS_URL) and PostgreSQL (TEST_PG_URL, default postgres://root@127.0.0.1:5432/test).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { benchEnv } from './lib/bench-env.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { runRowbridgeChild } from './lib/rowbridge-child.ts';
import type { RowbridgeRunResult } from './lib/rowbridge-child.ts';
import { deleteQueueKeys } from './lib/run-enqueued-job.ts';
import { spawnEmulator } from './lib/spawn-emulator.ts';

const LIMITS = { peakRssMb: 200, writes: 0, readRequestsPerThousandRows: 1.1 };
const flags = parseNumberFlags('bench/two-way.ts', {
  rows: { default: 100_000 },
  'timeout-s': { default: 3600 },
  hashed: { default: 0, min: 0 },
});
const rows = flags.rows;
const JOB = 'bench-two-way';
const SCHEMA = `twbench_${process.pid}`;
const PG_URL = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
/** Longer than the two-way cursor margin (two-way-cursors.ts), so each run's writes are behind the next cursor. */
const MARGIN_MS = 6_000;

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const db = new pg.Client({ connectionString: PG_URL });
await db.connect();
const tableWrites = async () =>
  Number((await db.query<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`)).rows[0]!.n);
await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
await db.query(`CREATE SCHEMA ${SCHEMA}`);
await db.query(`CREATE TABLE ${SCHEMA}.contacts (id serial PRIMARY KEY, email text NOT NULL, full_name text,
  tier text, credit numeric(12,2), updated_at timestamptz NOT NULL DEFAULT now())`);
await db.query(`INSERT INTO ${SCHEMA}.contacts (email, full_name, tier, credit)
  SELECT 'c' || i || '@x.test', 'Contact ' || i, (ARRAY['Gold','Silver','Bronze'])[1 + i % 3], i % 1000
  FROM generate_series(1, ${rows}) i`);
await db.query(`CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`);
await db.query(`INSERT INTO ${SCHEMA}.writes VALUES (0)`);
await db.query(`CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
  UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`);
await db.query(`CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${SCHEMA}.contacts
  FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`);
await db.query(
  `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$ LANGUAGE plpgsql`,
);
await db.query(
  `CREATE TRIGGER touch BEFORE UPDATE ON ${SCHEMA}.contacts FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
);

const emulator = await spawnEmulator({
  worksheet: {
    name: 'Contacts',
    alias: 'contacts',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
      { name: 'Tier', alias: 'tier', type: 'Text' },
      { name: 'Credit', alias: 'credit', type: 'Number' },
    ],
  },
});
const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-two-way-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ...benchEnv(emulator, 'two-way', { initial: 1000, max: 1000 }),
  ROWBRIDGE_JOBS_DIR: dir,
  TWBENCH_DB: PG_URL,
};
await writeFile(
  path.join(dir, `${JOB}.yaml`),
  `name: ${JOB}
source: { type: postgres, urlEnv: TWBENCH_DB, table: ${SCHEMA}.contacts, keyColumn: id,${flags.hashed === 1 ? '' : ' updatedAtColumn: updated_at,'} allowPrivilegedSource: true }
target: { worksheet: contacts, mode: two-way, key: email, conflict: ${flags.hashed === 1 ? 'source' : 'newest'} }
fields: { email: email, name: full_name, tier: tier, credit: credit }
`,
);
const redis = new Redis(env.REDIS_URL!);
const queuePrefix = env.ROWBRIDGE_QUEUE_PREFIX!;

/** Keys under the bench's queue prefix matching `pattern` (the state prefix sits inside it). */
async function keysLike(pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:${pattern}`, 'COUNT', 1000);
    cursor = next;
    out.push(...found);
  } while (cursor !== '0');
  return out;
}

interface RunFigures {
  seconds: number;
  peakRssMb: number;
  cpuSeconds: number | undefined;
  requests: number;
  writeRequests: number;
  tableWrites: number;
  reads: unknown;
  readWhole: unknown;
  linked: unknown;
}

async function run(label: string): Promise<RunFigures> {
  const before = { stats: await emulator.stats(), table: await tableWrites() };
  const result: RowbridgeRunResult = await runRowbridgeChild({ env, args: ['run', JOB, '--json'] });
  const run = result.output?.run as { status?: string; message?: string; runId?: string } | undefined;
  if (run?.status !== 'completed')
    throw new Error(`${label}: run ${String(run?.status)} (${String(run?.message)})\n${result.stderrTail}`);
  const [reportKey] = await keysLike(`*twoway-report:${run.runId}`);
  const report = JSON.parse((reportKey === undefined ? null : await redis.get(reportKey)) ?? '{}') as {
    reads?: unknown;
    readWhole?: unknown;
    counts?: { linked?: unknown };
  };
  const after = await emulator.stats();
  const figures = {
    seconds: round(result.seconds, 2),
    peakRssMb: result.peakRssMb,
    cpuSeconds: result.cpuSeconds,
    requests: after.requests - before.stats.requests,
    writeRequests: after.writeRequests - before.stats.writeRequests,
    tableWrites: (await tableWrites()) - before.table,
    reads: report.reads,
    readWhole: report.readWhole,
    linked: report.counts?.linked,
  };
  console.error(`${label}: ${JSON.stringify(figures)}`);
  return figures;
}

/** MEMORY USAGE of every key of the job's two-way state. */
async function twoWayBytes(): Promise<{ keys: number; bytes: number }> {
  const keys = await keysLike(`*:twoway:${JOB}:*`);
  let bytes = 0;
  for (const key of keys) bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  return { keys: keys.length, bytes };
}

try {
  const timeout = setTimeout(() => {
    console.error(`bench/two-way.ts: over --timeout-s ${flags['timeout-s']}`);
    process.exit(1);
  }, flags['timeout-s'] * 1000);
  const firstRun = await run('first run');
  await sleep(MARGIN_MS);
  const secondRun = await run('second run');
  await sleep(MARGIN_MS);
  const quiet = await run('quiet run');
  clearTimeout(timeout);
  const redisState = await twoWayBytes();
  const landed = (await emulator.stats()).rowCount;
  const readRequestsPerThousandRows = round((quiet.requests - quiet.writeRequests) / (rows / 1000), 3);
  const figures = {
    rows,
    table: flags.hashed === 1 ? 'row hashes' : 'updatedAtColumn',
    verified: landed === rows && quiet.linked === rows,
    quiet: { ...quiet, readRequests: quiet.requests - quiet.writeRequests, readRequestsPerThousandRows },
    redis: { ...redisState, bytesPerLinkedRecord: round(redisState.bytes / rows, 1) },
    firstRun,
    secondRun,
    limits: LIMITS,
    withinLimits: {
      peakRssMb: quiet.peakRssMb <= LIMITS.peakRssMb,
      writes: quiet.writeRequests + quiet.tableWrites === LIMITS.writes,
      readRequestsPerThousandRows: readRequestsPerThousandRows <= LIMITS.readRequestsPerThousandRows,
    },
    loadAverage1m: round(loadavg()[0]!, 2),
  };
  if (!figures.verified) process.exitCode = 1;
  console.log(JSON.stringify(figures, null, 2));
} finally {
  await emulator.close();
  await deleteQueueKeys(env);
  await redis.quit();
  await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await db.end();
  await rm(dir, { recursive: true, force: true });
}
