import { Queue } from 'bullmq';
import { RUN_QUEUE } from './queues.ts';
import type { QueueConnection } from './queues.ts';

/**
 * Whether any process listens to the run queue under the BullMQ `prefix` (the shared
 * one, or the queues of a `run JOB`). When CLIENT LIST is refused (some managed Redis)
 * the answer is yes: a run is never judged lost on a guess.
 */
export async function hasRunWorkers(
  rt: Pick<QueueConnection, 'connection'>,
  prefix: string,
): Promise<boolean> {
  const queue = new Queue(RUN_QUEUE, { connection: rt.connection, prefix });
  try {
    return (await queue.getWorkers()).length > 0;
  } catch {
    return true;
  } finally {
    await queue.close();
  }
}
