/**
 * `stale` (issue 27 §1): a job whose `expect.freshness` passed without a successful run,
 * checked by the workers every `everyMs`. The last success is kept by notify-run.ts; a
 * job that never succeeded is measured from when a worker first saw it. The cooldown
 * (notify-queue.ts) keeps a stale job from notifying at every check.
 */
import { readdir } from 'node:fs/promises';
import { durationMs } from '../sync/job-spec/notify-schemas.ts';
import { channelsOf, notifyKey, queueEvent } from './notify-queue.ts';
import type { Runtime } from './runtime.ts';

/** Checks every job once; resolves to the jobs found stale. */
export async function checkStaleJobs(rt: Runtime, now = Date.now()): Promise<string[]> {
  const files = await readdir(rt.jobsDir).catch(() => [] as string[]);
  const stale: string[] = [];
  for (const file of files) {
    const name = /^([a-z0-9][a-z0-9_-]*)\.ya?ml$/.exec(file)?.[1];
    if (name === undefined) continue;
    let freshness: number | undefined;
    try {
      const text = (await rt.loadJob(name)).spec.expect?.freshness;
      freshness = text === undefined ? undefined : durationMs(text);
    } catch {
      continue;
    }
    if (freshness === undefined) continue;
    const seenKey = notifyKey(rt, 'seen', name);
    await rt.redis.set(seenKey, String(now), 'NX');
    const since = Number(
      (await rt.redis.get(notifyKey(rt, 'ok', name))) ?? (await rt.redis.get(seenKey)) ?? now,
    );
    if (now - since <= freshness) continue;
    stale.push(name);
    const channels = (await channelsOf(rt, name)).filter((c) => c.channel.on.includes('stale'));
    await queueEvent(rt, name, [{ event: 'stale', channels }], () => ({
      event: 'stale',
      job: name,
      at: new Date(now).toISOString(),
      error: {
        category: 'stale',
        message: `no successful run since ${new Date(since).toISOString()} (expect.freshness ${Math.round(freshness / 1000)} s)`,
      },
    }));
  }
  return stale;
}

/** Runs {@link checkStaleJobs} every `everyMs` until the returned stop is called. */
export function startStaleCheck(rt: Runtime, everyMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    checkStaleJobs(rt)
      .catch((err: unknown) => rt.logger.warn({ err: { message: (err as Error).message } }, 'stale check'))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
