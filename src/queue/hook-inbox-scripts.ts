/**
 * The Lua scripts of the hook inbox (hook-inbox.ts), each run in one round trip by
 * EVALSHA. A webhook call is answered after exactly one of them (ACCEPT), so it is the
 * whole Redis cost of an accept: sending the script's text with every call cost more
 * than running it.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../sync/state/redis-types.ts';

/** Calls shown on the job page. */
export const RECENT = 20;

/** A Lua script and its SHA-1. */
export interface InboxScript {
  lua: string;
  sha: string;
}

function script(lua: string): InboxScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * Runs a script by its SHA, and by its text once when Redis does not know it (after a
 * restart or SCRIPT FLUSH), as the rate limiter's budget does. The client is not
 * modified (no defineCommand on a shared connection).
 */
export async function runScript(
  redis: RedisClient,
  { lua, sha }: InboxScript,
  keys: readonly string[],
  args: readonly string[],
): Promise<unknown> {
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return redis.eval(lua, keys.length, ...keys, ...args);
  }
}

/**
 * KEYS: delivery, pending, records, at, last, scheduled, recent, first.
 * ARGV: now, delivery id ('' for none), delivery TTL s, next run id, flag TTL ms, the
 * call's JSON, the call's JSON as a duplicate, token count, then token/data pairs.
 * Returns {-1, ''} for a duplicate (logged on the job's recent calls in the same trip),
 * else {tokens, run id to queue or ''}.
 */
export const ACCEPT = script(`
if ARGV[2] ~= '' then
  if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) then
    redis.call('LPUSH', KEYS[7], ARGV[7])
    redis.call('LTRIM', KEYS[7], 0, ${RECENT - 1})
    return {-1, ''}
  end
end
local n = tonumber(ARGV[8])
for i = 0, n - 1 do
  local token = ARGV[9 + 2 * i]
  local data = ARGV[10 + 2 * i]
  redis.call('SADD', KEYS[2], token)
  if data ~= '' then redis.call('HSET', KEYS[3], token, data) end
  redis.call('HSETNX', KEYS[4], token, ARGV[1])
end
redis.call('SET', KEYS[5], ARGV[1])
redis.call('SET', KEYS[8], ARGV[1], 'NX')
redis.call('LPUSH', KEYS[7], ARGV[6])
redis.call('LTRIM', KEYS[7], 0, ${RECENT - 1})
if redis.call('SET', KEYS[6], ARGV[4], 'NX', 'PX', ARGV[5]) then return {n, ARGV[4]} end
return {n, ''}
`);

/**
 * KEYS: taken, pending, last, scheduled, first.
 * ARGV: now, debounce ms, batch size, this run id, next run id, flag TTL ms, taken TTL s,
 * max wait ms. Returns {state, run id to queue or ''}.
 */
export const TAKE = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return {'ready', ''} end
local now = tonumber(ARGV[1])
local n = redis.call('SCARD', KEYS[2])
if n == 0 then
  if redis.call('GET', KEYS[4]) == ARGV[4] then redis.call('DEL', KEYS[4]) end
  redis.call('DEL', KEYS[5])
  return {'empty', ''}
end
local size = tonumber(ARGV[3])
local quiet = now - tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[2])
local overdue = now - tonumber(redis.call('GET', KEYS[5]) or ARGV[1]) >= tonumber(ARGV[8])
local m = n
if not quiet then
  m = math.floor(n / size) * size
  if m == 0 and overdue then m = n end
end
if m == 0 then
  redis.call('SET', KEYS[4], ARGV[4], 'NX', 'PX', ARGV[6])
  return {'wait', ''}
end
local popped = redis.call('SPOP', KEYS[2], m)
for i = 1, #popped, 1000 do
  redis.call('SADD', KEYS[1], unpack(popped, i, math.min(i + 999, #popped)))
end
redis.call('EXPIRE', KEYS[1], ARGV[7])
if redis.call('GET', KEYS[4]) == ARGV[4] then redis.call('DEL', KEYS[4]) end
if redis.call('SCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[5])
  return {'ready', ''}
end
redis.call('SET', KEYS[5], ARGV[1])
if redis.call('SET', KEYS[4], ARGV[5], 'NX', 'PX', ARGV[6]) then return {'ready', ARGV[5]} end
return {'ready', ''}
`);
