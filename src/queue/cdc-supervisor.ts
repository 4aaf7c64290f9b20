/**
 * A worker's change-capture consumers: one loop per postgres-cdc job of the jobs folder.
 * Every worker runs the loops; the slot's lock lets one of them stream and the others
 * wait, and a worker that dies stops renewing it, so another takes over within the
 * lock's time to live. A stream that fails is started again after a pause.
 */
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import { runCdcConsumer } from './cdc-consumer.ts';
import type { CdcConsumerOptions } from './cdc-consumer.ts';
import type { Runtime } from './runtime.ts';

/** How long a failed stream waits before it starts again. */
const RESTART_MS = 5_000;

/** Starts the consumers; resolves to the function that stops them (and waits for them). */
export async function startCdcConsumers(
  rt: Runtime,
  tuning: Partial<Pick<CdcConsumerOptions, 'lockTtlMs' | 'flushMs' | 'maxBatch' | 'heartbeatMs'>> = {},
): Promise<() => Promise<void>> {
  const jobs = await cdcJobs(rt);
  const stop = new AbortController();
  const holder = `${os.hostname()}:${process.pid}`;
  const loops = jobs.map(async (job) => {
    while (!stop.signal.aborted) {
      try {
        await runCdcConsumer(rt, { job, mode: 'follow', holder, signal: stop.signal, ...tuning });
      } catch (err) {
        rt.logger.error(
          { job, err: { message: (err as Error).message } },
          'change capture stopped; starting again',
        );
        await new Promise((r) => setTimeout(r, RESTART_MS).unref());
      }
    }
  });
  if (jobs.length > 0) rt.logger.info({ jobs }, 'change capture consumers started');
  return async () => {
    stop.abort();
    await Promise.allSettled(loops);
  };
}

async function cdcJobs(rt: Runtime): Promise<string[]> {
  const names = (await readdir(rt.jobsDir).catch(() => [] as string[]))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => f.replace(/\.ya?ml$/, ''));
  const found: string[] = [];
  for (const name of names) {
    const loaded = await rt.loadJob(name).catch(() => undefined);
    if (loaded?.spec.source.type === 'postgres-cdc') found.push(name);
  }
  return found;
}
