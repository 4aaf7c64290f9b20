import { createQueues } from './queues.ts';
import type { RunJobData } from './queues.ts';
import { newRunId } from './run-processor.ts';
import type { Runtime } from './runtime.ts';

export interface EnqueueOptions {
  trigger: RunJobData['trigger'];
  force?: boolean;
  replayIds?: string[];
}

/**
 * Validates the job spec (so a broken file fails here, not in a worker), records the
 * run and queues it. Job data holds names and options only: credentials stay in the
 * environment of the workers.
 */
export async function enqueueRun(rt: Runtime, jobName: string, options: EnqueueOptions): Promise<string> {
  await rt.loadJob(jobName);
  const runId = newRunId(jobName);
  await rt.runs.create({ runId, job: jobName, trigger: options.trigger, ...(options.replayIds ? { replay: `${options.replayIds.length} dead letters` } : {}) });
  const queues = createQueues(rt);
  try {
    await queues.runs.add(
      'run',
      {
        runId,
        job: jobName,
        trigger: options.trigger,
        ...(options.force === true ? { force: true } : {}),
        ...(options.replayIds === undefined ? {} : { replayIds: options.replayIds }),
      },
      { jobId: runId, attempts: 3, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 1000, removeOnFail: 1000 },
    );
  } finally {
    await queues.close();
  }
  return runId;
}
