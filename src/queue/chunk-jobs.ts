/**
 * A backfill's pieces: one chunk job per piece of the range, children of the run job,
 * each fanning out its own batches (chunk-processor.ts).
 */
import type { Job, Queue } from 'bullmq';
import { splitRange } from '../sync/read/split-range.ts';
import type { RunJobData } from './queues.ts';
import type { RunStore } from '../sync/state/run-store.ts';

/** Adds the run's chunk jobs, under fixed ids: a resumed read adds none twice. */
export async function addChunkJobs(
  runs: Pick<RunStore, 'update'>,
  runQueue: Queue<RunJobData>,
  parent: Job<RunJobData>,
  runId: string,
  range: NonNullable<RunJobData['range']>,
): Promise<void> {
  const pieces = splitRange(range.from, range.to, range.chunks);
  await runs.update(runId, { range: `${range.from}..${range.to} in ${pieces.length} chunks` });
  for (const [i, piece] of pieces.entries()) {
    await runQueue.add(
      'chunk',
      { runId, job: parent.data.job, trigger: parent.data.trigger, chunk: { no: i, ...piece } },
      {
        jobId: `${runId}-chunk${i}`,
        parent: { id: parent.id!, queue: parent.queueQualifiedName },
        attempts: 3,
        backoff: { type: 'exponential', delay: 2000 },
        removeOnComplete: true,
        removeOnFail: { age: 7 * 86_400, count: 1000 },
        ignoreDependencyOnFailure: true,
      },
    );
  }
}
