/**
 * The dead-letter store's Lua scripts. Each runs atomically, so the entry hash and the
 * sorted-set indexes never disagree, whatever crashes or concurrent writers do.
 *
 * Keys: KEYS[1] is the entry hash, KEYS[2] the overall index (page script: the index
 * scanned, then the hash). The per-category/job/run index keys are derived inside the
 * scripts from ARGV[1] (`<prefix>:dlq:`); a braced prefix (`{rowbridge}`) puts them in
 * the same Redis Cluster slot as the declared keys, as BullMQ does with its prefix.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** ARGV: base, then (id, json, score, category, job, runId) per entry. Returns the number added. */
const ADD = `
local base = ARGV[1]
local added = 0
for i = 2, #ARGV, 6 do
  local id = ARGV[i]
  if redis.call('HSETNX', KEYS[1], id, ARGV[i + 1]) == 1 then
    local score = ARGV[i + 2]
    redis.call('ZADD', KEYS[2], score, id)
    redis.call('ZADD', base .. 'cat:' .. ARGV[i + 3], score, id)
    redis.call('ZADD', base .. 'job:' .. ARGV[i + 4], score, id)
    redis.call('ZADD', base .. 'run:' .. ARGV[i + 5], score, id)
    added = added + 1
  end
end
return added
`;

/**
 * ARGV: base, then ids. The entry itself says which indexes hold it, so a caller never
 * needs a read-then-write that could race with a concurrent add.
 */
const REMOVE = `
local base = ARGV[1]
local removed = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  local raw = redis.call('HGET', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  if raw then
    local entry = cjson.decode(raw)
    redis.call('HDEL', KEYS[1], id)
    redis.call('ZREM', base .. 'cat:' .. entry.category, id)
    redis.call('ZREM', base .. 'job:' .. entry.job, id)
    redis.call('ZREM', base .. 'run:' .. entry.runId, id)
    removed = removed + 1
  end
end
return removed
`;

/**
 * ARGV: (id, json) pairs. Rewrites entries that exist (a person fixed their record);
 * an id no longer there (replayed or purged meanwhile) stays absent. Returns the count.
 */
const REPLACE = `
local replaced = 0
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    replaced = replaced + 1
  end
end
return replaced
`;

/**
 * KEYS[1]: index, KEYS[2]: entry hash. ARGV: direction (asc|desc), mode (start|after),
 * start rank or the id of the last item seen, that item's score, count.
 * Returns flat (id, score, json) triples; nil when the "after" item is no longer in the
 * index with that score (the caller then locates the position by score).
 */
const PAGE = `
local rev = ARGV[1] == 'desc'
local start
if ARGV[2] == 'after' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
  if (not score) or tonumber(score) ~= tonumber(ARGV[4]) then return false end
  if rev then start = redis.call('ZREVRANK', KEYS[1], ARGV[3]) + 1
  else start = redis.call('ZRANK', KEYS[1], ARGV[3]) + 1 end
else
  start = tonumber(ARGV[3])
end
local stop = start + tonumber(ARGV[5]) - 1
local items
if rev then items = redis.call('ZRANGE', KEYS[1], start, stop, 'REV', 'WITHSCORES')
else items = redis.call('ZRANGE', KEYS[1], start, stop, 'WITHSCORES') end
local out = {}
for i = 1, #items, 2 do
  out[#out + 1] = items[i]
  out[#out + 1] = items[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], items[i]) or ''
end
return out
`;

/** A Lua script with its SHA-1, for EVALSHA. */
export interface DeadLetterScript {
  name: string;
  lua: string;
  sha: string;
}

function script(name: string, lua: string): DeadLetterScript {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

export const DEAD_LETTER_SCRIPTS = {
  add: script('add', ADD),
  remove: script('remove', REMOVE),
  replace: script('replace', REPLACE),
  page: script('page', PAGE),
} as const;

function scriptError(s: DeadLetterScript, err: unknown): Error {
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`dead-letter store: ${s.name} failed: ${reason}`, { cause: err });
}

/**
 * EVALSHA, falling back to EVAL once after a Redis restart or SCRIPT FLUSH. The
 * injected client is left unmodified (no defineCommand on someone else's connection).
 */
export async function runDeadLetterScript(
  redis: Redis,
  s: DeadLetterScript,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  try {
    return await redis.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) {
      throw scriptError(s, err);
    }
  }
  try {
    return await redis.eval(s.lua, keys.length, ...keys, ...args);
  } catch (err) {
    throw scriptError(s, err);
  }
}
