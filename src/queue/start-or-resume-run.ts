import type { RunRecord } from '../sync/state/run-store.ts';
import { enqueueRun } from './enqueue-run.ts';
import { createQueues } from './queues.ts';
import { abandonRun, findUnfinishedRun, requeueRun, takeOverOrphans } from './resume-run.ts';
import type { RunFlags } from './resume-run.ts';
import type { Runtime } from './runtime-types.ts';

/** What `run JOB` works on. */
export interface StartedRun {
  runId: string;
  /** The unfinished run resumed under its own id, as it was found. */
  resumed?: RunRecord;
}

/**
 * `run JOB`: resumes the job's unfinished run (its process died, it was interrupted, or
 * it failed on a cause since fixed) under its own run id, taking over at once what a
 * dead process held; `fresh` gives that run up and starts anew; otherwise a new run is
 * queued. The caller then works this one run only.
 */
export async function startOrResumeRun(
  rt: Runtime,
  job: string,
  options: RunFlags & { fresh?: boolean } = {},
): Promise<StartedRun> {
  const { fresh, ...flags } = options;
  const unfinished = await findUnfinishedRun(rt, job);
  if (unfinished !== undefined && fresh !== true) {
    const queues = createQueues(rt);
    try {
      if (unfinished.status === 'failed') await requeueRun(rt, queues.runs, unfinished, flags);
      else await takeOverOrphans(queues);
    } finally {
      await queues.close();
    }
    return { runId: unfinished.runId, resumed: unfinished };
  }
  if (unfinished !== undefined) await abandonRun(rt, unfinished);
  return { runId: await enqueueRun(rt, job, { trigger: 'cli', ...flags }) };
}
