/**
 * A worker's change-capture consumers: one loop per postgres-cdc job of the jobs folder.
 * Every worker runs the loops; the slot's lock lets one of them stream and the others
 * wait, and a worker that dies stops renewing it, so another takes over within the
 * lock's time to live. A stream that fails is started again after a pause.
 */
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CdcConsumerOptions } from './cdc-consumer.ts';
import type { Runtime } from './runtime-types.ts';

/** How long a failed stream waits before it starts again. */
const RESTART_MS = 5_000;

/** Starts the consumers; resolves to the function that stops them (and waits for them). */
export async function startCdcConsumers(
  rt: Runtime,
  tuning: Partial<Pick<CdcConsumerOptions, 'lockTtlMs' | 'flushMs' | 'maxBatch' | 'heartbeatMs'>> = {},
): Promise<() => Promise<void>> {
  const jobs = await cdcJobs(rt);
  const stop = new AbortController();
  if (jobs.length === 0) return () => Promise.resolve();
  // The consumer brings the sync engine and the replication client: only when a job streams.
  const { runCdcConsumer } = await import('./cdc-consumer.ts');
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
  const files = (await readdir(rt.jobsDir).catch(() => [] as string[])).filter((f) => /\.ya?ml$/.test(f));
  const found: string[] = [];
  for (const file of files) {
    // A spec that never says postgres-cdc is not one: skipping it keeps the YAML and
    // schema modules out of a worker that has no change capture.
    const text = await readFile(path.join(rt.jobsDir, file), 'utf8').catch(() => '');
    if (!text.includes('postgres-cdc')) continue;
    const name = file.replace(/\.ya?ml$/, '');
    const loaded = await rt.loadJob(name).catch(() => undefined);
    if (loaded?.spec.source.type === 'postgres-cdc') found.push(name);
  }
  return found;
}
