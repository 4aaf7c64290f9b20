/**
 * `tap | rowbridge singer JOB`: a Singer tap's output written into a job whose source is
 * `{ type: singer, stream: NAME }` (docs/singer.md). Stdin cannot be read twice, so it is
 * cut into chunks at the tap's STATEs (sync/singer/singer-chunks.ts); each chunk is staged
 * in a private file and run like `run JOB` runs a job, in this process's own queues, with
 * the batch writer, dead letters and exactly-once of any run. A chunk's STATEs are printed
 * only once its run has written or dead-lettered every record, so the last line on stdout
 * is always a state the tap can be restarted from without losing a record.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadSettings } from '../../config/settings.ts';
import { ConfigError } from '../ground/errors.ts';
import { enqueueRun } from '../queue/enqueue-run.ts';
import { hasRunWorkers } from '../queue/has-run-workers.ts';
import { abandonRun, findUnfinishedRun } from '../queue/resume-run.ts';
import type { Runtime } from '../queue/runtime-types.ts';
import { checkSingerSchema } from '../sync/singer/check-singer-schema.ts';
import { singerChunks } from '../sync/singer/singer-chunks.ts';
import type { SingerChunk } from '../sync/singer/singer-chunks.ts';
import { splitLines } from '../sync/sources/ndjson-source.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import { positiveInt, UsageError } from './args.ts';
import { defineCommand, parseCommand } from './command.ts';
import { formatFailure, runExitCode } from './format-report.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { JobBusyError } from './job-busy-error.ts';
import { localQueuePrefix } from './local-run.ts';
import { openRuntime, resolveJobArg } from './open-runtime.ts';
import { ensureRedisReachable } from './redis-reachable.ts';
import { reportFailure } from './report-failure.ts';
import { workRunsInProcess } from './work-run.ts';

const SINGER = defineCommand({
  name: 'singer',
  usage: ['singer JOB [--chunk-rows N] [--chunk-seconds S] [--concurrency N]'],
  description:
    "Reads a Singer tap's output on stdin (SCHEMA, RECORD and STATE lines) and writes the\n" +
    "records of the job's stream (source: { type: singer, stream: NAME }) like `run` does.\n" +
    'Each STATE is printed to stdout once every record before it is written or dead-lettered:\n' +
    'restart the tap from the last line printed and nothing is lost.\n' +
    'Exit 0 every record landed, 2 some were dead-lettered, 3 an expectation was not met,\n' +
    '1 failure (no STATE past the failure is printed), 64 misuse, 75 the job is being worked elsewhere.',
  options: {
    'chunk-rows': {
      type: 'string',
      value: 'N',
      help: 'records written as one run, at the latest (default 5000)',
    },
    'chunk-seconds': {
      type: 'string',
      value: 'S',
      help: 'a STATE ends a chunk that has been filling this long (default 10; 0: every STATE)',
    },
    concurrency: { type: 'string', value: 'N', help: 'batches worked at once (default 4)' },
  },
  positionals: { min: 1, max: 1, label: 'job' },
});

/** `--chunk-seconds`: a whole number, 0 included. */
function seconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,6}$/.test(value))
    throw new UsageError(`--chunk-seconds must be a whole number of seconds (0 or more), got "${value}"`);
  return Number(value);
}

/** What the chunks' runs did, added up. */
interface Totals {
  records: number;
  chunks: number;
  created: number;
  updated: number;
  unchanged: number;
  deadLettered: number;
  exit: number;
}

/**
 * `singer JOB`. A run of the job left unfinished (the last `singer` was killed) is given
 * up first: the tap restarted from the last STATE printed sends its records again, and
 * a keyed job finds the rows that run wrote by their key (no second row).
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(SINGER, args, io);
  if (typeof parsed === 'number') return parsed;
  const job = resolveJobArg(parsed.positionals[0]!, io);
  try {
    await ensureRedisReachable(loadSettings(io.env).redisUrl, 3_000);
  } catch (err) {
    return reportFailure(err, io);
  }
  const rt = openRuntime(io, { quiet: false, ...(job.jobsDir ? { jobsDir: job.jobsDir } : {}) });
  let staging: string | undefined;
  try {
    const chunkRows = positiveInt(parsed.values['chunk-rows'], 'chunk-rows');
    const chunkSeconds = seconds(parsed.values['chunk-seconds']);
    const concurrency = positiveInt(parsed.values.concurrency, 'concurrency');
    const { spec } = await rt.loadJob(job.name);
    const source = spec.source;
    if (source.type !== 'singer')
      throw new ConfigError(
        `job ${job.name} reads a ${source.type} source: \`singer\` writes a tap's output into a job whose source is { type: singer, stream: NAME }`,
      );
    const local: Runtime = { ...rt, queuePrefix: localQueuePrefix(rt.queuePrefix, job.name) };
    await giveUpUnfinished(local, job.name, io);
    staging = await mkdtemp(path.join(tmpdir(), 'rowbridge-singer-'));
    const totals: Totals = {
      records: 0,
      chunks: 0,
      created: 0,
      updated: 0,
      unchanged: 0,
      deadLettered: 0,
      exit: 0,
    };
    process.stdin.setEncoding('utf8');
    const chunks = singerChunks(splitLines(process.stdin as AsyncIterable<string>), {
      stream: source.stream,
      ...(chunkRows === undefined ? {} : { chunkRows }),
      ...(chunkSeconds === undefined ? {} : { chunkMs: chunkSeconds * 1000 }),
      checkSchema: (schema, where) => checkSingerSchema(spec.name, source, spec.mappings, schema, where),
    });
    for await (const chunk of chunks) {
      if (chunk.records.length > 0) {
        const failed = await writeChunk(local, job.name, chunk, staging, io, totals, concurrency);
        if (failed !== undefined) return failed;
      }
      // Only now: every record before these STATEs is written or dead-lettered.
      for (const state of chunk.states) io.out(JSON.stringify(state));
    }
    io.err(
      `singer ${job.name}: ${totals.records} records of stream ${source.stream} in ${totals.chunks} runs: ` +
        `created ${totals.created}, updated ${totals.updated}, unchanged ${totals.unchanged}, dead-lettered ${totals.deadLettered}`,
    );
    return totals.exit;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    if (staging !== undefined) await rm(staging, { recursive: true, force: true });
    await rt.close();
  }
}

/**
 * Stages one chunk and works it as a run in this process. Returns the exit code when the
 * run failed (its STATEs are then never printed), else undefined.
 */
async function writeChunk(
  local: Runtime,
  job: string,
  chunk: SingerChunk,
  staging: string,
  io: CliIo,
  totals: Totals,
  concurrency: number | undefined,
): Promise<number | undefined> {
  const file = path.join(staging, `chunk-${totals.chunks}.jsonl`);
  await writeFile(file, chunk.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  const runId = await enqueueRun(local, job, { trigger: 'cli', singerChunk: file });
  // Said before any process can take the run: workers judging the job's lock look here.
  await local.runs.update(runId, { queues: local.queuePrefix });
  const [result] = await workRunsInProcess(local, [runId], io, {
    ...(concurrency === undefined ? {} : { concurrency }),
    showProgress: false,
  });
  await rm(file, { force: true });
  const { record, report } = result!;
  const first = chunk.records[0]!.line;
  if (record?.status !== 'completed' && record?.status !== 'unmet') {
    if (record !== undefined) io.err(formatFailure(record, report, { command: cmd(io), resumable: false }));
    io.err(
      `singer ${job}: the records of stdin lines ${first}-${chunk.lastLine} were not all written; ` +
        'no STATE after them was printed: restart the tap from the last STATE printed',
    );
    return EXIT.failure;
  }
  totals.chunks += 1;
  totals.records += chunk.records.length;
  totals.created += report.created;
  totals.updated += report.updated;
  totals.unchanged += report.unchanged;
  totals.deadLettered += report.deadLetteredTotal;
  totals.exit = Math.max(totals.exit, runExitCode(record, report));
  io.err(
    `run ${runId}: stdin lines ${first}-${chunk.lastLine}, ${chunk.records.length} records: created ${report.created}, ` +
      `updated ${report.updated}, unchanged ${report.unchanged}, dead-lettered ${report.deadLetteredTotal}`,
  );
  return undefined;
}

/**
 * The job's run left unfinished by a `singer` that was killed (or a failed one) is given
 * up: its staged records are gone with that process, and the tap re-sends them.
 */
async function giveUpUnfinished(local: Runtime, job: string, io: CliIo): Promise<void> {
  const unfinished = await findUnfinishedRun(local, job);
  if (unfinished === undefined) return;
  const running = !TERMINAL_STATUSES.has(unfinished.status);
  const queues = unfinished.queues ?? local.settings.queuePrefix;
  if (running && (await hasRunWorkers(local, queues)))
    throw new JobBusyError(
      `run ${unfinished.runId} of job ${job} (${unfinished.status}) is being worked by another process; see \`${cmd(io)} status ${unfinished.runId}\``,
    );
  if (running)
    await local.runs.fail(
      unfinished.runId,
      'abandoned: the singer command that ran it stopped; the tap restarted from its last STATE sends its records again',
    );
  await abandonRun(local, unfinished);
  io.err(
    `run ${unfinished.runId} of job ${job} did not finish (${unfinished.status}): given up; the records after the last STATE printed are written now`,
  );
}
