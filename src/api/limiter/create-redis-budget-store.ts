import type { Redis } from 'ioredis';
import { BUDGET_SCRIPT, BUDGET_SCRIPT_SHA } from './budget-script.ts';
import type { AcquireReply, BudgetReply, BudgetStore } from './budget-store.ts';
import type { BudgetConfig } from './budget-transitions.ts';

/** Dependencies of the Redis-shared budget. */
export interface RedisBudgetStoreDeps {
  redis: Redis;
  /** The budget's hash key; every process with the same key shares one budget. */
  budgetKey: string;
  config: BudgetConfig;
  /** An untouched budget is deleted after this long; the next one starts at the learned rate. */
  idleTtlMs: number;
  /**
   * How long the rate a budget learned outlives it (key `${budgetKey}:learned`, refreshed
   * whenever its estimate changes); a budget created meanwhile starts from it.
   */
  learnedTtlMs: number;
}

type Op = 'acquire' | 'throttled' | 'success';

function parseReply(reply: unknown, budgetKey: string): AcquireReply {
  if (Array.isArray(reply) && reply.length === 3) {
    const waitMs = Number(reply[0]);
    const rate = Number(reply[1]);
    const granted = Number(reply[2]);
    if (Number.isFinite(waitMs) && Number.isFinite(rate) && Number.isInteger(granted)) {
      return { waitMs, rate, granted };
    }
  }
  throw new Error(`rate limiter: unexpected reply from the budget script for ${budgetKey}`);
}

/**
 * A budget shared through Redis by every process that uses the same budgetKey: one
 * atomic script call per operation (no read-modify-write race between processes).
 * Uses EVALSHA and falls back to EVAL once after a restart or SCRIPT FLUSH, so the
 * injected client is not modified (no defineCommand on someone else's connection).
 */
export function createRedisBudgetStore(deps: RedisBudgetStoreDeps): BudgetStore {
  const { redis, budgetKey, config } = deps;
  const idleTtlMs = String(Math.ceil(deps.idleTtlMs));
  const learnedTtlMs = String(Math.ceil(deps.learnedTtlMs));
  const learnedKey = `${budgetKey}:learned`;

  async function run(op: Op, pauseMs = 0, count = 1): Promise<AcquireReply> {
    const args = [
      op,
      String(config.initialRate),
      String(config.minRate),
      String(config.maxRate),
      String(config.decreaseFactor),
      String(config.increasePerSec),
      String(config.increaseIntervalMs),
      String(config.burstMs),
      idleTtlMs,
      String(pauseMs),
      '',
      String(count),
      learnedTtlMs,
    ];
    let reply: unknown;
    try {
      reply = await redis.evalsha(BUDGET_SCRIPT_SHA, 2, budgetKey, learnedKey, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) {
        throw new Error(`rate limiter: budget ${op} failed for ${budgetKey}`, { cause: err });
      }
      try {
        reply = await redis.eval(BUDGET_SCRIPT, 2, budgetKey, learnedKey, ...args);
      } catch (evalErr) {
        throw new Error(`rate limiter: budget ${op} failed for ${budgetKey}`, { cause: evalErr });
      }
    }
    return parseReply(reply, budgetKey);
  }

  return {
    acquire: (count = 1) => run('acquire', 0, count),
    throttled: (pauseMs): Promise<BudgetReply> => run('throttled', pauseMs),
    success: (): Promise<BudgetReply> => run('success'),
  };
}
