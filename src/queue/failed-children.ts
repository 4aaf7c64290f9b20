import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { batchRowIndexes } from '../sync/batch/batch-job-rows.ts';
import type { OutcomeLedger } from '../sync/state/outcome-ledger.ts';
import type { BatchJobData, RunJobData } from './queues.ts';

/**
 * Children that fail for good. Batch and chunk jobs are added with
 * `ignoreDependencyOnFailure`, so their parent goes on when one fails every attempt
 * (BullMQ moves it from the parent's dependencies to the parent's `:failed` hash,
 * child key -> failedReason) and a worker that cannot even read a job (a newer format)
 * still lets the run finish. That hash is what finalizing reads (findUnwritten): it is
 * written by BullMQ's own script whatever version the failing worker runs, and it
 * outlives the child (removeOnFail trims the failed job, not the entry). A resume takes
 * the failed children back (reviveFailedChildren) and their rows are read again.
 */

/** The two queues a run's jobs live in: chunks in `runs`, batches in `batches`. */
export interface RunQueues {
  runs: Queue<RunJobData>;
  batches: Queue<BatchJobData>;
}

/** What the children of a run (or of a chunk) that failed for good left unwritten. */
export interface Unwritten {
  /** Batch jobs that failed for good with rows that have no final outcome. */
  batchJobs: number;
  /** Their rows without a final outcome, as far as they can be counted. */
  rows: number;
  /** Some of those jobs could not be counted (trimmed from Redis): `rows` is a floor. */
  uncounted: boolean;
  /** Chunk jobs of a backfill that failed reading their range. */
  chunks: number;
  /** Why the first of them failed (its failedReason). */
  reason: string;
}

/** Which queue a child job key (`<prefix>:<queue>:<id>`) belongs to, and its id. */
function childOf(key: string, queues: RunQueues): { kind: keyof RunQueues; id: string } | undefined {
  for (const kind of ['batches', 'runs'] as const) {
    const prefix = `${queues[kind].qualifiedName}:`;
    if (key.startsWith(prefix)) return { kind, id: key.slice(prefix.length) };
  }
  return undefined;
}

/**
 * The rows a run's failed children left without a final outcome, or undefined when there
 * are none. Rows are checked against the outcome ledger: a job that failed after every
 * row of it had an outcome (a dead letter written, then an error) lost nothing. A job in
 * another format is reported uncounted: its indexes are not known. A chunk that failed
 * once its batch jobs were done failed over them (chunk-processor.ts): its own children
 * are counted instead.
 */
export async function findUnwritten(
  parent: Job,
  queues: RunQueues,
  ledger: Pick<OutcomeLedger, 'getOutcomes'>,
  runId: string,
): Promise<Unwritten | undefined> {
  const found: Unwritten = { batchJobs: 0, rows: 0, uncounted: false, chunks: 0, reason: '' };
  await collect(parent);
  return found.batchJobs + found.chunks > 0 ? found : undefined;

  async function collect(p: Job): Promise<void> {
    for (const [key, reason] of Object.entries(await p.getIgnoredChildrenFailures())) {
      const child = childOf(key, queues);
      if (child?.kind === 'runs') {
        const chunk = await queues.runs.getJob(child.id);
        const before = found.batchJobs;
        if (chunk?.data.step === 'finalize') await collect(chunk);
        if (found.batchJobs === before) {
          found.chunks += 1;
          found.reason ||= reason;
        }
        continue;
      }
      const job = child === undefined ? undefined : await queues.batches.getJob(child.id);
      const open = job === undefined ? undefined : await openRows(job.data);
      if (open === 0) continue;
      found.batchJobs += 1;
      found.reason ||= reason;
      if (open === undefined) found.uncounted = true;
      else found.rows += open;
    }
  }

  async function openRows(data: BatchJobData): Promise<number | undefined> {
    const indexes = batchRowIndexes(data);
    if (indexes === undefined) return undefined;
    const known = await ledger.getOutcomes(runId, indexes);
    return indexes.filter((i) => {
      const outcome = known.get(i);
      return outcome === undefined || outcome === 'pending';
    }).length;
  }
}

/** The run's failure message: what was not written, why, and what to do. */
export function describeUnwritten(found: Unwritten, jobName: string): string {
  const count = (n: number, what: string) => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (found.batchJobs > 0) {
    const rows = !found.uncounted
      ? count(found.rows, 'row')
      : found.rows > 0
        ? `at least ${count(found.rows, 'row')}`
        : 'rows not counted: gone from Redis or in another format';
    parts.push(`${count(found.batchJobs, 'batch job')} (${rows}) failed without being written`);
  }
  if (found.chunks > 0)
    parts.push(
      `${count(found.chunks, 'chunk job')} failed reading ${found.chunks === 1 ? 'its' : 'their'} range`,
    );
  return `${parts.join(' and ')}: ${found.reason}; run \`rowbridge run ${jobName}\` to retry them`;
}

/**
 * Before a parent reads (again): its children that failed for good are taken back, so
 * that this read writes their rows. A failed batch job is removed, and its rows come
 * again from the source, cut where the first read cut them
 * (sync/fan-out/cut-batch-jobs.ts): a re-read gives
 * every row without an outcome the job id it had, and the job is added anew under that
 * id, in this version's format and mapped by the run's snapshot as it is now (the fix
 * may have been in the job spec). Kept, the failed job would hold the id: BullMQ would
 * ignore the re-added job, put the failed one back among the parent's dependencies, and
 * the parent would wait for it forever. A failed chunk is retried to read its range
 * again (and to do the same with its own failed batch jobs).
 *
 * Failed children are found by their ids (`<parent>-<n>`, `<parent>-chunk<i>`), not by
 * the parent's `:failed` entries, which are gone with a parent job that was trimmed,
 * cleaned or completed (a chunk of a stopped run) while its failed children stayed. The
 * entries read before are cleared after, so finalizing counts only what fails this time;
 * one written meanwhile stays, and errs towards failing the run.
 */
export async function reviveFailedChildren(parent: Job, queues: RunQueues, redis: Redis): Promise<void> {
  const id = parent.id ?? '';
  const entries = Object.keys(await parent.getIgnoredChildrenFailures());
  for (const childId of await failedChildIds(queues.batches, redis, id, /^\d+$/))
    await (await queues.batches.getJob(childId))?.remove();
  for (const childId of await failedChildIds(queues.runs, redis, id, /^chunk\d+$/)) {
    const chunk = await queues.runs.getJob(childId);
    if (chunk === undefined) continue;
    await chunk.updateData({ ...chunk.data, step: 'read' });
    await chunk.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
  }
  if (entries.length > 0) await redis.hdel(`${parent.queueQualifiedName}:${id}:failed`, ...entries);
}

/**
 * Ids of the failed jobs of `queue` named `<parentId>-<tail>` with `tail` of `shape`. The
 * failed set holds a thousand jobs at most (removeOnFail), so a scan of it is cheap.
 */
async function failedChildIds(
  queue: Queue,
  redis: Redis,
  parentId: string,
  shape: RegExp,
): Promise<string[]> {
  const ids = new Set<string>();
  const match = `${parentId.replace(/[*?[\]\\]/g, '\\$&')}-*`;
  let cursor = '0';
  do {
    const [next, items] = await redis.zscan(queue.keys.failed!, cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    for (let i = 0; i < items.length; i += 2) {
      const childId = items[i]!;
      if (shape.test(childId.slice(parentId.length + 1))) ids.add(childId);
    }
  } while (cursor !== '0');
  return [...ids];
}
