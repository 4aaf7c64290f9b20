import { afterAll, describe, it, expect } from 'vitest';
import { BUDGET_SCRIPT } from '../../src/api/limiter/budget-script.ts';
import { budgetTransitions } from '../../src/api/limiter/budget-transitions.ts';
import type { BudgetConfig, BudgetState } from '../../src/api/limiter/budget-transitions.ts';
import { createLimiterTestRedis } from './fixtures/limiter-redis.ts';

/**
 * The Lua script must be an exact mirror of the pure transitions. Both replay one
 * timeline (the script's optional fixed clock replaces Redis TIME) and the stored hash
 * must equal the pure state bit for bit.
 */
const env = createLimiterTestRedis('limiter-redis-script');
afterAll(async () => {
  await env.cleanup();
});

const config: BudgetConfig = {
  initialRate: 7,
  minRate: 0.5,
  maxRate: 13,
  decreaseFactor: 0.7,
  increasePerSec: 1.5,
  increaseIntervalMs: 300,
  burstMs: 250,
};

type Step = { op: 'acquire'; count?: number } | { op: 'success' } | { op: 'throttled'; pauseMs: number };

async function runScript(
  key: string,
  step: Step,
  nowMs: number,
  idleTtlMs = 60_000,
  learnedKey?: string,
): Promise<{ waitMs: number; rate: number; granted: number }> {
  const pauseMs = step.op === 'throttled' ? step.pauseMs : 0;
  const count = step.op === 'acquire' && step.count !== undefined ? String(step.count) : '';
  const keys = learnedKey === undefined ? [key] : [key, learnedKey];
  const reply = (await env.redis.eval(
    BUDGET_SCRIPT,
    keys.length,
    ...keys,
    step.op,
    String(config.initialRate),
    String(config.minRate),
    String(config.maxRate),
    String(config.decreaseFactor),
    String(config.increasePerSec),
    String(config.increaseIntervalMs),
    String(config.burstMs),
    String(idleTtlMs),
    String(pauseMs),
    String(nowMs),
    count,
    '3600000',
  )) as [string, string, string];
  return { waitMs: Number(reply[0]), rate: Number(reply[1]), granted: Number(reply[2]) };
}

async function storedState(key: string): Promise<BudgetState> {
  const h = await env.redis.hgetall(key);
  return {
    tokens: Number(h.tokens),
    lastRefillMs: Number(h.lastRefillMs),
    rate: Number(h.rate),
    pausedUntilMs: Number(h.pausedUntilMs),
    lastIncreaseMs: Number(h.lastIncreaseMs),
    lastWaitMs: Number(h.lastWaitMs),
    windowStartMs: Number(h.windowStartMs),
    windowGrants: Number(h.windowGrants),
    probeBaseRate: Number(h.probeBaseRate),
    probeFromMs: Number(h.probeFromMs),
    windowStartRate: Number(h.windowStartRate),
    passedRate: Number(h.passedRate),
    estimate: Number(h.estimate),
  };
}

function pureStep(
  state: BudgetState,
  step: Step,
  nowMs: number,
): { state: BudgetState; waitMs: number; granted: number } {
  if (step.op === 'acquire') return budgetTransitions.acquire(state, config, nowMs, step.count);
  if (step.op === 'success')
    return { state: budgetTransitions.success(state, config, nowMs), waitMs: 0, granted: 0 };
  return { state: budgetTransitions.throttled(state, config, nowMs, step.pauseMs), waitMs: 0, granted: 0 };
}

describe('budget Lua script', () => {
  it('matches the pure transitions step by step on a mixed timeline', async () => {
    const key = env.key('conformance');
    // Deterministic pseudo-random timeline: bursts of acquires, successes, throttles with
    // overlapping pauses, idle gaps, fractional clock values.
    let seed = 42;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const t0 = 1_700_000_000_123.25;
    let now = t0;
    let state = budgetTransitions.initial(config, t0);
    const seen = {
      increase: 0,
      decrease: 0,
      waited: 0,
      paused: 0,
      granted: 0,
      measured: 0,
      slowProbe: 0,
    };
    for (let i = 0; i < 400; i += 1) {
      const r = rnd();
      const step: Step =
        r < 0.3
          ? { op: 'acquire' }
          : r < 0.6
            ? { op: 'acquire', count: 1 + Math.floor(rnd() * 4) }
            : r < 0.93
              ? { op: 'success' }
              : { op: 'throttled', pauseMs: Math.floor(rnd() * 900) };
      const lua = await runScript(key, step, now);
      const pure = pureStep(state, step, now);
      if (pure.state.rate > state.rate) seen.increase += 1;
      if (pure.state.rate < state.rate) seen.decrease += 1;
      if (pure.state.probeFromMs !== state.probeFromMs) seen.measured += 1;
      if (pure.state.rate > state.rate && state.probeBaseRate > 0 && state.rate >= state.probeBaseRate)
        seen.slowProbe += 1;
      if (step.op === 'acquire' && now < state.pausedUntilMs) seen.paused += 1;
      else if (step.op === 'acquire' && pure.waitMs > 0) seen.waited += 1;
      else if (step.op === 'acquire') seen.granted += 1;
      state = pure.state;
      expect({ i, ...lua }).toEqual({ i, waitMs: pure.waitMs, rate: state.rate, granted: pure.granted });
      expect(await storedState(key)).toEqual(state);
      now += rnd() < 0.1 ? rnd() * 3000 : rnd() * 60 + 0.125;
    }
    // The timeline exercised every branch that matters.
    for (const [name, count] of Object.entries(seen))
      expect({ name, seen: count > 0 }).toEqual({ name, seen: true });
  });

  it('starts from a learned rate and writes back the estimate exactly as the pure transitions do (issue 24 §6)', async () => {
    const key = env.key('learned');
    const learnedKey = `${key}:learned`;
    await env.redis.hset(learnedKey, { rate: '9.25', probeBaseRate: '9.25' });
    const t0 = 1_700_000_000_000;
    let state = budgetTransitions.initial(config, t0, { rate: 9.25, probeBaseRate: 9.25 });
    // Busy callers and a success each interval; throttled at 2 s (the small step), then
    // at 5 s (measured), then the climb continues: every kind of estimate is written.
    const steps: { at: number; step: Step }[] = [];
    for (let at = t0; at < t0 + 8000; at += 50) {
      steps.push({ at, step: { op: 'acquire', count: 3 } });
      if ((at - t0) % 300 === 0) steps.push({ at, step: { op: 'success' } });
      if (at === t0 + 2000 || at === t0 + 5000) steps.push({ at, step: { op: 'throttled', pauseMs: 400 } });
    }
    const written = new Set<number>();
    for (const [i, { at, step }] of steps.entries()) {
      const lua = await runScript(key, step, at, 60_000, learnedKey);
      const pure = pureStep(state, step, at);
      state = pure.state;
      expect({ i, ...lua }).toEqual({ i, waitMs: pure.waitMs, rate: state.rate, granted: pure.granted });
      expect(await storedState(key)).toEqual(state);
      const stored = await env.redis.hgetall(learnedKey);
      expect({ i, rate: Number(stored.rate), probeBaseRate: Number(stored.probeBaseRate) }).toEqual({
        i,
        ...budgetTransitions.learnedOf(state),
      });
      written.add(Number(stored.rate));
    }
    // The small step at 2 s, the measure at 5 s, rates that passed after each.
    expect(state.rate).not.toBe(9.25);
    expect(written.size).toBeGreaterThanOrEqual(3);
  });

  it('grants several tokens at once exactly as the pure transition does', async () => {
    const key = env.key('several');
    const t = 1_700_000_000_000;
    const state: BudgetState = {
      ...budgetTransitions.initial(config, t),
      tokens: 3.5,
      rate: 13,
      windowStartMs: t - 5000,
      windowGrants: 7,
    };
    await env.redis.hset(key, Object.fromEntries(Object.entries(state).map(([k, v]) => [k, String(v)])));
    let pure = state;
    for (const [i, count] of [5, 2, 1].entries()) {
      const lua = await runScript(key, { op: 'acquire', count }, t + i);
      const next = budgetTransitions.acquire(pure, config, t + i, count);
      pure = next.state;
      expect({ count, ...lua }).toEqual({
        count,
        waitMs: next.waitMs,
        rate: pure.rate,
        granted: next.granted,
      });
      expect(await storedState(key)).toEqual(pure);
    }
    // 3.5 tokens (plus 2 ms of refill): 3 for the first ask of 5, none left for the next.
    expect(pure.windowGrants).toBe(7 + 3);
  });

  it('clamps a stored rate into the caller bounds and rejects an unknown op', async () => {
    const key = env.key('clamp');
    await env.redis.hset(key, {
      tokens: '0',
      lastRefillMs: '1000',
      rate: '99',
      pausedUntilMs: '0',
      lastIncreaseMs: '1000',
      lastWaitMs: '0',
    });
    const reply = await runScript(key, { op: 'acquire' }, 1000);
    expect(reply.rate).toBe(config.maxRate);
    await expect(runScript(key, { op: 'bogus' } as unknown as Step, 1000)).rejects.toThrow(
      /unknown op bogus/,
    );
  });

  it('expires an idle budget, but not before a pause has run out', async () => {
    const key = env.key('ttl');
    await runScript(key, { op: 'acquire' }, 5000, 2000);
    const idle = await env.redis.pttl(key);
    expect(idle).toBeGreaterThan(0);
    expect(idle).toBeLessThanOrEqual(2000);
    await runScript(key, { op: 'throttled', pauseMs: 30_000 }, 5000, 2000);
    expect(await env.redis.pttl(key)).toBeGreaterThan(30_000);
  });
});
