import { readdir } from 'node:fs/promises';
import { scheduleOf } from '../sync/job-spec/schedule-schema.ts';
import { createJobPauses } from '../sync/state/job-pauses.ts';
import type { Redis } from 'ioredis';
import { createQueues } from './queues.ts';
import type { QueueConnection } from './queues.ts';
import type { LoadJob } from './runtime-types.ts';

/** What registering schedules reads: the jobs folder, the job pauses, the run queue. */
export interface ScheduleDeps extends QueueConnection {
  jobsDir: string;
  loadJob: LoadJob;
  /** State connection: a paused job gets no scheduler. */
  redis: Redis;
  statePrefix: string;
}

/**
 * Registers one BullMQ job scheduler per job spec with a `schedule`, and removes the
 * schedulers of jobs that no longer have one. Scheduler ids are the job names, so any
 * number of workers may do this at start-up: the last upsert wins, nothing doubles.
 */
export async function registerSchedules(
  rt: ScheduleDeps,
): Promise<{ registered: string[]; removed: string[] }> {
  const queues = createQueues(rt);
  const pauses = createJobPauses({ redis: rt.redis, prefix: rt.statePrefix });
  try {
    const files = (await readdir(rt.jobsDir).catch(() => [] as string[])).filter((f) => /\.ya?ml$/.test(f));
    const registered: string[] = [];
    const wanted = new Set<string>();
    for (const file of files) {
      const name = file.replace(/\.ya?ml$/, '');
      let spec;
      try {
        ({ spec } = await rt.loadJob(name));
      } catch (err) {
        rt.logger.error(
          { err: { message: (err as Error).message } },
          `job ${name} is invalid: not scheduled`,
        );
        continue;
      }
      // A schedule paused from the dashboard stays off (its scheduler removed below).
      if (spec.schedule === undefined || (await pauses.isPaused(name))) continue;
      wanted.add(name);
      await queues.runs.upsertJobScheduler(name, scheduleOf(spec.schedule), {
        name: 'run',
        data: { job: name, trigger: 'schedule' },
        opts: {
          attempts: 3,
          backoff: { type: 'exponential', delay: 2000 },
          removeOnComplete: 1000,
          removeOnFail: 1000,
        },
      });
      registered.push(name);
    }
    const removed: string[] = [];
    for (const scheduler of await queues.runs.getJobSchedulers()) {
      if (scheduler.key !== undefined && !wanted.has(scheduler.key)) {
        await queues.runs.removeJobScheduler(scheduler.key);
        removed.push(scheduler.key);
      }
    }
    return { registered, removed };
  } finally {
    await queues.close();
  }
}
