/**
 * How many rows one batch job carries (issue 12: a run's write requests near their
 * floor).
 *
 * A batch job classifies its rows (create, changed, unchanged) and writes them: creates
 * in platform batches of `batchSize`, changed rows grouped by identical change set (one
 * batch PATCH per set and `batchSize` rows, one single PATCH per row whose set is its
 * own). Both groupings reach across the rows of one job only, so a job of `batchSize`
 * rows sent a part-filled create and a part-filled PATCH per shared change set every
 * `batchSize` rows (213 writes where 154 would do in bench/requests.ts). A job of ten
 * platform batches pays that remainder once per ten; and since the reader settles
 * unchanged rows itself (settle-unchanged.ts, sync/fan-out/cut-batch-jobs.ts), those are
 * ten platform batches of rows to write.
 *
 * Why not one accumulator for the whole run: rows would wait in Redis, outside any batch
 * job, for a flush step, and every crash path (a worker killed between handing rows over
 * and their write) would need a new owner for them. A job holds its rows until each has
 * an outcome, which is what keeps them exactly-once.
 */

/** Platform batches per batch job. */
export const PLATFORM_BATCHES_PER_JOB = 10;

/** Rows one batch job holds at most (its data sits in Redis until it is done), unless `batchSize` is larger. */
export const MAX_ROWS_PER_BATCH_JOB = 1000;

/** Rows per batch job for a target `batchSize`: ten platform batches, at most 1,000 rows, at least one batch. */
export function rowsPerBatchJob(batchSize: number): number {
  return Math.max(batchSize, Math.min(batchSize * PLATFORM_BATCHES_PER_JOB, MAX_ROWS_PER_BATCH_JOB));
}
