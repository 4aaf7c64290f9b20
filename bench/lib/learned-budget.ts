import { Redis } from 'ioredis';
import { loadSettings } from '../../config/settings.ts';
import { statePrefixOf } from '../../src/cli/create-runtime.ts';
import type { EmulatorProcessStats } from './emulator-process.ts';

/**
 * Deletes the shared budgets under the queue prefix of `env` and keeps the rates they
 * learned (`…:learned`): what a budget's idle expiry (10 min) does, without the wait. A
 * run after it starts as a run of the next hour does (issue 24 §6).
 */
export async function expireBudgets(env: NodeJS.ProcessEnv): Promise<number> {
  const settings = loadSettings({ ROWBRIDGE_LOG_LEVEL: 'warn', ...env });
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${statePrefixOf(settings.queuePrefix)}:budget:*`,
        'COUNT',
        1000,
      );
      cursor = next;
      const budgets = keys.filter((key) => !key.endsWith(':learned'));
      if (budgets.length > 0) deleted += await redis.del(...budgets);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

/** The emulator's counts since `before` (rows stay the worksheet's total). */
export function statsSince(now: EmulatorProcessStats, before: EmulatorProcessStats): EmulatorProcessStats {
  const byCode: Record<string, number> = {};
  for (const [code, n] of Object.entries(now.byCode)) byCode[code] = n - (before.byCode[code] ?? 0);
  return {
    ...now,
    requests: now.requests - before.requests,
    writeRequests: now.writeRequests - before.writeRequests,
    byCode,
    cpuSeconds: now.cpuSeconds - before.cpuSeconds,
  };
}
