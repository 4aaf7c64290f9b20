/**
 * Lua of the compact key index. The index of a job is a generation: `<base>` holds the
 * current generation's name, `<base>:<gen>:m` its meta (L, p: linear hashing's level
 * and split pointer; n: entries in buckets), `<base>:<gen>:b:<i>` the buckets (hashes
 * of digest → entry, small enough to stay listpack-encoded), `<base>:<gen>:x` the
 * overflow (full key → entry) of keys whose digest another key of the index holds.
 *
 * Every script finds the generation and the bucket itself, so a rebuild that switches
 * generations, and a split that moves half a bucket, are atomic for every reader. All
 * keys share the base's prefix, so on a cluster (prefix with a hash tag) they share a slot.
 *
 * Linear hashing grows the index one bucket at a time, as entries arrive: a split moves
 * the entries of bucket p whose address at level L+1 is p + 2^L, so no write ever
 * rehashes the whole index and no bucket outgrows the listpack encoding.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-types.ts';

const PRELUDE = `
local base = ARGV[1]
local gen = ARGV[2]
if gen == '' then gen = redis.call('GET', KEYS[1]) end
local function k(suffix) return base .. ':' .. gen .. ':' .. suffix end
local L, p, meta = 0, 0, nil
if gen then
  meta = k('m')
  local lp = redis.call('HMGET', meta, 'L', 'p')
  L = tonumber(lp[1]) or 0
  p = tonumber(lp[2]) or 0
end
local function hnum(f)
  local a, b, c, d = string.byte(f, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + d
end
-- Hoisted: addr runs once per key. relevel() after L or p change.
local m1, m2, bp = 1, 2, ''
local function relevel()
  m1, m2 = 2 ^ L, 2 ^ (L + 1)
  if gen then bp = k('b:') end
end
relevel()
local function addr(f)
  local h = hnum(f)
  local i = h % m1
  if i < p then i = h % m2 end
  return bp .. i
end
local function rid(v)
  if #v == 16 or #v == 22 then return string.sub(v, 1, 16) end
  local nul = string.find(v, '\\0', 1, true)
  return nul and string.sub(v, 1, nul - 1) or v
end
`;

/** ARGV: base, gen ('' = current), then key, digest per entry. Returns entries (nil when absent). */
const GET = `${PRELUDE}
local out = {}
local n = (#ARGV - 2) / 2
if not gen then
  for i = 1, n do out[i] = false end
  return out
end
local x = k('x')
local hasX = redis.call('EXISTS', x) == 1
for i = 1, n do
  local key, f = ARGV[1 + 2 * i], ARGV[2 + 2 * i]
  local v = false
  if hasX then v = redis.call('HGET', x, key) end
  if not v then v = redis.call('HGET', addr(f), f) end
  out[i] = v
end
return out
`;

/**
 * ARGV: base, gen ('' = current, created as ARGV[3] when there is none), new-gen name,
 * load (entries per bucket before a split), then key, digest, entry per entry.
 * A digest held by another row's entry sends the key to the overflow: within a rebuild
 * keys are distinct, so that is a collision for sure; within a run rowbridge never
 * moves a key to another row, so it is one too, or harmless. Returns the number of keys
 * sent to the overflow.
 */
const SET = `${PRELUDE}
if not gen then
  gen = ARGV[3]
  redis.call('SET', KEYS[1], gen)
  meta = k('m')
  redis.call('HSET', meta, 'L', 0, 'p', 0, 'n', 0)
  relevel()
end
local load = tonumber(ARGV[4])
local x = k('x')
local hasX = redis.call('EXISTS', x) == 1
local n = tonumber(redis.call('HGET', meta, 'n')) or 0
local n0, overflowed = n, 0
-- Splits bucket p: its entries whose address at level L+1 is p + 2^L move there.
local function split()
  local from = k('b:' .. p)
  local to = p + 2 ^ L
  local flat = redis.call('HGETALL', from)
  local moved, gone = {}, {}
  for j = 1, #flat, 2 do
    if hnum(flat[j]) % (2 ^ (L + 1)) == to then
      moved[#moved + 1] = flat[j]
      moved[#moved + 1] = flat[j + 1]
      gone[#gone + 1] = flat[j]
    end
  end
  if #gone > 0 then
    redis.call('HSET', k('b:' .. to), unpack(moved))
    redis.call('HDEL', from, unpack(gone))
  end
  p = p + 1
  if p == 2 ^ L then
    L = L + 1
    p = 0
  end
  relevel()
end
for i = 5, #ARGV, 3 do
  local key, f, v = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if hasX and redis.call('HEXISTS', x, key) == 1 then
    redis.call('HSET', x, key, v)
  else
    local b = addr(f)
    local old = redis.call('HGET', b, f)
    if old and rid(old) ~= rid(v) then
      redis.call('HSET', x, key, v)
      hasX = true
      overflowed = overflowed + 1
    else
      n = n + redis.call('HSET', b, f, v)
      -- Split as entries arrive, not after: a bucket must never pass the listpack limit,
      -- or Redis turns it into a hashtable for good.
      while n > load * (2 ^ L + p) do split() end
    end
  end
end
if n ~= n0 then redis.call('HSET', meta, 'n', n, 'L', L, 'p', p) end
return overflowed
`;

/** ARGV: base, gen ('' = current), then key, digest per entry. Returns entries removed. */
const REMOVE = `${PRELUDE}
if not gen then return 0 end
local x = k('x')
local hasX = redis.call('EXISTS', x) == 1
local fromBuckets, removed = 0, 0
for i = 3, #ARGV, 2 do
  local key, f = ARGV[i], ARGV[i + 1]
  if hasX and redis.call('HDEL', x, key) == 1 then
    removed = removed + 1
  else
    fromBuckets = fromBuckets + redis.call('HDEL', addr(f), f)
  end
end
redis.call('HINCRBY', meta, 'n', -fromBuckets)
return removed + fromBuckets
`;

/** ARGV: base, gen ('' = current). Returns {gen, L, p, n, overflow} or nil. */
const INFO = `${PRELUDE}
if not gen then return nil end
local n = tonumber(redis.call('HGET', meta, 'n')) or 0
return {gen, L, p, n, redis.call('HLEN', k('x'))}
`;

/** A script and its SHA-1 for EVALSHA. */
interface Script {
  name: string;
  lua: string;
  sha: string;
}

const script = (name: string, lua: string): Script => ({
  name,
  lua,
  sha: createHash('sha1').update(lua).digest('hex'),
});

export const INDEX_SCRIPTS = {
  get: script('get', GET),
  set: script('set', SET),
  remove: script('remove', REMOVE),
  info: script('info', INFO),
} as const;

/** EVALSHA with binary replies, EVAL once after a Redis restart or SCRIPT FLUSH. */
export async function runIndexScript(
  redis: RedisClient,
  s: Script,
  pointer: string,
  args: ReadonlyArray<string | number | Buffer>,
): Promise<unknown> {
  try {
    return await redis.callBuffer('EVALSHA', s.sha, 1, pointer, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT'))
      throw new Error(`key index: script ${s.name} failed: ${(err as Error).message}`, { cause: err });
  }
  return redis.callBuffer('EVAL', s.lua, 1, pointer, ...args);
}
