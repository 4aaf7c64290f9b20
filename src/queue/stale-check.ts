/**
 * `stale` (issue 27 §1): a job whose `expect.freshness` passed without a successful run,
 * checked by the workers every `everyMs`. The last success is kept by notify-run.ts; a
 * job that never succeeded is measured from when a worker first saw it. The cooldown
 * (notify-queue.ts) keeps a stale job from notifying at every check.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Runtime } from './runtime-types.ts';

/** Checks every job once; resolves to the jobs found stale. */
export async function checkStaleJobs(rt: Runtime, now = Date.now()): Promise<string[]> {
  const files = await readdir(rt.jobsDir).catch(() => [] as string[]);
  const stale: string[] = [];
  for (const file of files) {
    const name = /^([a-z0-9][a-z0-9_-]*)\.ya?ml$/.exec(file)?.[1];
    if (name === undefined) continue;
    // Only a spec that says `freshness` can expect it: the others are not parsed, so a
    // worker whose jobs expect none never loads the YAML, schema and notify modules.
    const text = await readFile(path.join(rt.jobsDir, file), 'utf8').catch(() => '');
    if (!text.includes('freshness')) continue;
    const [{ durationMs }, { channelsOf, notifyKey, queueEvent }] = await Promise.all([
      import('../sync/job-spec/notify-schemas.ts'),
      import('./notify-queue.ts'),
    ]);
    let freshness: number | undefined;
    try {
      const declared = (await rt.loadJob(name)).spec.expect?.freshness;
      freshness = declared === undefined ? undefined : durationMs(declared);
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
