import { createHash } from 'node:crypto';
import { BUDGET_CONSTANTS } from './budget-transitions.ts';

const C = BUDGET_CONSTANTS;

/**
 * Lua mirror of `budget-transitions.ts`, run atomically by Redis so that every process
 * sharing a budget sees one consistent bucket. Keep the two in step: the integration
 * test `limiter-redis-script.test.ts` replays the same operations through both and
 * compares the stored state field by field.
 *
 * KEYS[1]: the budget hash (fields tokens, lastRefillMs, rate, pausedUntilMs,
 * lastIncreaseMs, lastWaitMs, windowStartMs, windowGrants, probeBaseRate, probeFromMs,
 * windowStartRate, passedRate, estimate; those after lastWaitMs read as 0 when absent, i.e.
 * from a budget written by an older version).
 * ARGV: op ("acquire" | "throttled" | "success"), initialRate, minRate, maxRate,
 * decreaseFactor, increasePerSec, increaseIntervalMs, burstMs, idleTtlMs, pauseMs,
 * nowMs ("" in production: Redis server TIME, so the clocks of the machines running
 * the workers never matter; a number only when a test replays a fixed timeline),
 * count (tokens wanted by an acquire; "" means 1), learnedTtlMs.
 * KEYS[2] (optional): the credential's learned rate (fields rate, probeBaseRate: `learnedOf`
 * in budget-transitions.ts), written whenever the budget's estimate changes and kept
 * learnedTtlMs; a budget created while it exists starts from it instead of initialRate
 * (see `initial` there).
 * Returns { waitMs, rate, granted } as strings: Redis would truncate Lua numbers to integers.
 * Numbers are stored with 17 significant digits so a double survives the round trip.
 */
export const BUDGET_SCRIPT = `
local key = KEYS[1]
local op = ARGV[1]
local initialRate = tonumber(ARGV[2])
local minRate = tonumber(ARGV[3])
local maxRate = tonumber(ARGV[4])
local decreaseFactor = tonumber(ARGV[5])
local increasePerSec = tonumber(ARGV[6])
local increaseIntervalMs = tonumber(ARGV[7])
local burstMs = tonumber(ARGV[8])
local idleTtlMs = tonumber(ARGV[9])
local pauseMs = tonumber(ARGV[10])

local now
if ARGV[11] ~= '' then
  now = tonumber(ARGV[11])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end

local MIN_WINDOW_MS = ${C.MIN_WINDOW_MS}
local MIN_CUT = ${C.MIN_CUT}
local MAX_WINDOW_PAUSE_MS = ${C.MAX_WINDOW_PAUSE_MS}
local PROBE_GROWTH = ${C.PROBE_GROWTH}

local function clamp(v, lo, hi) return math.min(hi, math.max(lo, v)) end
local function capacity(rate) return math.max(1, (rate * burstMs) / 1000) end
local function fmt(v) return string.format('%.17g', v) end

local raw = redis.call('HMGET', key, 'tokens', 'lastRefillMs', 'rate', 'pausedUntilMs', 'lastIncreaseMs', 'lastWaitMs',
  'windowStartMs', 'windowGrants', 'probeBaseRate', 'probeFromMs', 'windowStartRate', 'passedRate', 'estimate')
local learnedKey = KEYS[2]
local s
if not raw[1] then
  s = { tokens = 1, lastRefillMs = now, rate = clamp(initialRate, minRate, maxRate),
        pausedUntilMs = 0, lastIncreaseMs = now, lastWaitMs = 0,
        windowStartMs = 0, windowGrants = 0, probeBaseRate = 0, probeFromMs = 0,
        windowStartRate = 0, passedRate = 0, estimate = 0 }
  if learnedKey then
    local learned = redis.call('HMGET', learnedKey, 'rate', 'probeBaseRate')
    local learnedRate = tonumber(learned[1])
    if learnedRate and learnedRate > 0 then
      s.rate = clamp(learnedRate, minRate, maxRate)
      s.probeBaseRate = math.min(maxRate, math.max(0, tonumber(learned[2]) or 0))
      s.estimate = s.rate
      if s.probeBaseRate > 0 then
        s.probeFromMs = now
        s.windowStartMs = now
      end
    end
  end
  s.windowStartRate = s.rate
else
  s = { tokens = tonumber(raw[1]), lastRefillMs = tonumber(raw[2]), rate = tonumber(raw[3]),
        pausedUntilMs = tonumber(raw[4]), lastIncreaseMs = tonumber(raw[5]), lastWaitMs = tonumber(raw[6]),
        windowStartMs = tonumber(raw[7]) or 0, windowGrants = tonumber(raw[8]) or 0,
        probeBaseRate = tonumber(raw[9]) or 0, probeFromMs = tonumber(raw[10]) or 0,
        windowStartRate = tonumber(raw[11]) or 0, passedRate = tonumber(raw[12]) or 0,
        estimate = tonumber(raw[13]) or 0 }
end

local function refill()
  local rate = clamp(s.rate, minRate, maxRate)
  local elapsed = math.max(0, now - s.lastRefillMs)
  s.tokens = math.min(capacity(rate), s.tokens + (elapsed * rate) / 1000)
  s.rate = rate
  s.lastRefillMs = math.max(s.lastRefillMs, now)
end

local estimateBefore = s.estimate
local waitMs = 0
local granted = 0
if op == 'acquire' then
  local count = 1
  if ARGV[12] ~= nil and ARGV[12] ~= '' then count = tonumber(ARGV[12]) end
  if now < s.pausedUntilMs then
    waitMs = s.pausedUntilMs - now
  else
    refill()
    if s.tokens >= 1 then
      granted = math.max(1, math.min(math.floor(count), math.floor(s.tokens)))
      s.tokens = s.tokens - granted
      s.windowGrants = s.windowGrants + granted
    else
      s.lastWaitMs = now
      waitMs = ((1 - s.tokens) * 1000) / s.rate
    end
  end
elseif op == 'throttled' then
  refill()
  local fresh = now >= s.pausedUntilMs
  local pausedUntil = math.max(s.pausedUntilMs, now + pauseMs)
  local windowMs = now - s.windowStartMs
  local measured = fresh and s.windowStartMs > 0 and windowMs >= MIN_WINDOW_MS
  if fresh then
    local floor = math.max(minRate, s.rate * decreaseFactor)
    if measured then
      s.rate = math.max(floor, math.min((s.windowGrants * 1000) / windowMs, s.rate * (1 - MIN_CUT)))
    else
      s.rate = floor
    end
  end
  local openWindow = pausedUntil - now <= MAX_WINDOW_PAUSE_MS
  s.pausedUntilMs = pausedUntil
  s.tokens = 1
  s.lastRefillMs = math.max(s.lastRefillMs, pausedUntil)
  s.lastIncreaseMs = math.max(s.lastIncreaseMs, pausedUntil)
  if fresh then
    s.windowStartMs = openWindow and now or 0
    s.windowGrants = 0
  end
  if not openWindow then
    s.windowStartMs = 0
    s.windowGrants = 0
  end
  if measured then
    s.probeBaseRate = s.rate
    s.probeFromMs = pausedUntil
  end
  if fresh then
    if not measured then
      s.estimate = math.max(s.rate, s.passedRate)
    elseif s.windowStartRate >= s.rate then
      s.estimate = s.rate
    else
      s.estimate = (s.rate + math.max(s.rate, s.passedRate)) / 2
    end
    s.windowStartRate = s.rate
    s.passedRate = 0
  end
elseif op == 'success' then
  refill()
  local due = now >= s.pausedUntilMs and now - s.lastIncreaseMs >= increaseIntervalMs
  local demandBound = s.lastWaitMs > s.lastIncreaseMs
  if due and demandBound then
    s.passedRate = math.max(s.passedRate, s.rate)
    s.estimate = math.max(s.estimate, s.passedRate)
  end
  if due and demandBound and s.rate < maxRate then
    local step = increasePerSec
    if s.probeBaseRate > 0 and s.rate >= s.probeBaseRate then
      step = math.min(increasePerSec, s.probeBaseRate * PROBE_GROWTH * (math.max(0, now - s.probeFromMs) / 1000))
    end
    local target = s.rate + step
    if s.probeBaseRate > s.rate and target > s.probeBaseRate then
      target = s.probeBaseRate
    end
    s.rate = math.min(maxRate, target)
    s.lastIncreaseMs = now
  end
else
  return redis.error_reply('rowbridge budget script: unknown op ' .. tostring(op))
end

redis.call('HSET', key, 'tokens', fmt(s.tokens), 'lastRefillMs', fmt(s.lastRefillMs), 'rate', fmt(s.rate),
  'pausedUntilMs', fmt(s.pausedUntilMs), 'lastIncreaseMs', fmt(s.lastIncreaseMs), 'lastWaitMs', fmt(s.lastWaitMs),
  'windowStartMs', fmt(s.windowStartMs), 'windowGrants', fmt(s.windowGrants),
  'probeBaseRate', fmt(s.probeBaseRate), 'probeFromMs', fmt(s.probeFromMs),
  'windowStartRate', fmt(s.windowStartRate), 'passedRate', fmt(s.passedRate), 'estimate', fmt(s.estimate))
-- An idle budget disappears; a pause outlives the idle TTL so a quota pause is not forgotten.
redis.call('PEXPIRE', key, math.ceil(math.max(idleTtlMs, s.pausedUntilMs - now + idleTtlMs)))
if learnedKey and s.estimate > 0 and s.estimate ~= estimateBefore then
  redis.call('HSET', learnedKey, 'rate', fmt(s.estimate), 'probeBaseRate', fmt(s.estimate))
  redis.call('PEXPIRE', learnedKey, math.ceil(tonumber(ARGV[13])))
end
return { fmt(waitMs), fmt(s.rate), tostring(granted) }
`;

/** SHA-1 of the script, for EVALSHA. */
export const BUDGET_SCRIPT_SHA = createHash('sha1').update(BUDGET_SCRIPT).digest('hex');
