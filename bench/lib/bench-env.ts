import { randomBytes } from 'node:crypto';

/**
 * glibc's malloc as docs/deployment.md tells the operator to set it (the Dockerfile and
 * compose.yaml do): two arenas, and blocks of 128 KB or more returned at once. Benchmarks
 * measure under it, as a deployment runs; a value in this process's environment wins
 * (`MALLOC_ARENA_MAX= node bench/import.ts` measures glibc's default).
 */
export const DEPLOYMENT_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_TRIM_THRESHOLD_: '131072',
  MALLOC_MMAP_THRESHOLD_: '131072',
};

/** The malloc variables a bench child runs with (see DEPLOYMENT_MALLOC_ENV). */
export function mallocEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(DEPLOYMENT_MALLOC_ENV)) {
    const given = process.env[name];
    if (given === undefined) out[name] = value;
    else if (given !== '') out[name] = given;
  }
  return out;
}

/**
 * The rowbridge environment of a bench run against an emulator child: its credentials,
 * a fresh queue prefix (deleted by runQueuedJob), the rates to start from, and the
 * caller's log level when it set one.
 */
export function benchEnv(
  emulator: { url: string; appKey: string; sign: string; headerPrefix: string },
  name: string,
  rates: { initial: number; max: number },
): NodeJS.ProcessEnv {
  return {
    ROWBRIDGE_API_URL: emulator.url,
    ROWBRIDGE_APPKEY: emulator.appKey,
    ROWBRIDGE_SIGN: emulator.sign,
    ROWBRIDGE_HEADER_PREFIX: emulator.headerPrefix,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ROWBRIDGE_QUEUE_PREFIX: `rbbench-${name}-${process.pid}-${randomBytes(3).toString('hex')}`,
    ROWBRIDGE_RATE: String(rates.initial),
    ROWBRIDGE_MAX_RATE: String(rates.max),
    ROWBRIDGE_MAX_CONCURRENT: '8',
    ...mallocEnv(),
    ...(process.env.ROWBRIDGE_LOG_LEVEL === undefined
      ? {}
      : { ROWBRIDGE_LOG_LEVEL: process.env.ROWBRIDGE_LOG_LEVEL }),
  };
}
