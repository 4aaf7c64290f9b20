import { randomBytes } from 'node:crypto';

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
    ...(process.env.ROWBRIDGE_LOG_LEVEL === undefined
      ? {}
      : { ROWBRIDGE_LOG_LEVEL: process.env.ROWBRIDGE_LOG_LEVEL }),
  };
}
