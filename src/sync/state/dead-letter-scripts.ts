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

/**
 * Shared by the scripts below. The row index `<base>row:<job>` is a hash from a row's
 * identity (`id:<source id>` or `key:<key>`, as rowIdentity in dead-letter-entry.ts) to
 * the ids of the job's entries about that row, space-separated (entry ids hold none).
 */
const HELPERS = `
local function identity(entry)
  local source = entry.source
  if type(source) == 'table' and type(source.position) == 'table' and type(source.position.id) == 'string' then
    return 'id:' .. source.position.id
  end
  if type(entry.key) == 'string' then return 'key:' .. entry.key end
  return nil
end
local function rowAdd(base, job, ident, id)
  local key = base .. 'row:' .. job
  local cur = redis.call('HGET', key, ident)
  if cur then redis.call('HSET', key, ident, cur .. ' ' .. id) else redis.call('HSET', key, ident, id) end
end
local function rowDel(base, job, ident, id)
  local key = base .. 'row:' .. job
  local cur = redis.call('HGET', key, ident)
  if not cur then return end
  local kept = {}
  for x in string.gmatch(cur, '%S+') do if x ~= id then kept[#kept + 1] = x end end
  if #kept == 0 then redis.call('HDEL', key, ident) else redis.call('HSET', key, ident, table.concat(kept, ' ')) end
end
local function indexAdd(base, id, score, entry)
  redis.call('ZADD', KEYS[2], score, id)
  redis.call('ZADD', base .. 'cat:' .. entry.category, score, id)
  redis.call('ZADD', base .. 'job:' .. entry.job, score, id)
  redis.call('ZADD', base .. 'run:' .. entry.runId, score, id)
  local ident = identity(entry)
  if ident then rowAdd(base, entry.job, ident, id) end
end
-- Removes an entry and its index members; returns the decoded entry, or nil when absent.
local function removeEntry(base, id)
  local raw = redis.call('HGET', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  if not raw then return nil end
  local entry = cjson.decode(raw)
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', base .. 'cat:' .. entry.category, id)
  redis.call('ZREM', base .. 'job:' .. entry.job, id)
  redis.call('ZREM', base .. 'run:' .. entry.runId, id)
  local ident = identity(entry)
  if ident then rowDel(base, entry.job, ident, id) end
  return entry
end
`;

/** ARGV: base, then (id, json, score) per entry. Returns the number added. */
const ADD = `${HELPERS}
local base = ARGV[1]
local added = 0
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('HSETNX', KEYS[1], id, ARGV[i + 1]) == 1 then
    indexAdd(base, id, ARGV[i + 2], cjson.decode(ARGV[i + 1]))
    added = added + 1
  end
end
return added
`;

/**
 * ARGV: base, then ids. The entry itself says which indexes hold it, so a caller never
 * needs a read-then-write that could race with a concurrent add.
 */
const REMOVE = `${HELPERS}
local base = ARGV[1]
local removed = 0
for i = 2, #ARGV do
  if removeEntry(base, ARGV[i]) then removed = removed + 1 end
end
return removed
`;

/**
 * Rows that landed resolve their dead letters. KEYS[3]: the run's report counters.
 * ARGV: base, job, runId, mode (rows|ids), then row identities (rows) or entry ids (ids).
 * By identity, the run's own entries stay (another row of this run with the same key).
 * Removing and counting in one script is what makes `resolved` exactly-once: a retried
 * batch finds the entries gone. Returns the number resolved.
 */
const RESOLVE = `${HELPERS}
local base, job, runId, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local resolved = 0
for i = 5, #ARGV do
  local ids = {}
  if mode == 'ids' then ids[1] = ARGV[i]
  else
    local cur = redis.call('HGET', base .. 'row:' .. job, ARGV[i])
    if cur then for x in string.gmatch(cur, '%S+') do ids[#ids + 1] = x end end
  end
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', KEYS[1], id)
    if raw and (mode == 'ids' or cjson.decode(raw).runId ~= runId) then
      removeEntry(base, id)
      resolved = resolved + 1
    end
  end
end
if resolved > 0 then redis.call('HINCRBY', KEYS[3], 'resolved', resolved) end
return resolved
`;

/**
 * A row that failed again in a replay keeps its entry's id: ARGV base, from id, to id,
 * the entry as it now is (JSON, already carrying the to id), its score. The fresh entry
 * (from) replaces the older one (to) atomically; nothing happens when from is gone (a
 * finalizer retried after it moved), so it runs any number of times.
 */
const MOVE = `${HELPERS}
local base, from, to = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HEXISTS', KEYS[1], from) == 0 then return 0 end
removeEntry(base, from)
removeEntry(base, to)
redis.call('HSET', KEYS[1], to, ARGV[4])
indexAdd(base, to, ARGV[5], cjson.decode(ARGV[4]))
return 1
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

/**
 * Entries stored before the row index get their key and their place in it. ARGV: base,
 * then (id, json as read, json with the key) triples. Compare-and-set: an entry changed
 * or removed meanwhile is left alone. Listing an id twice is avoided, so it runs any
 * number of times. Returns the number of entries newly indexed.
 */
const ADOPT = `${HELPERS}
local base = ARGV[1]
local indexed = 0
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[1], id) == ARGV[i + 1] then
    if ARGV[i + 2] ~= ARGV[i + 1] then redis.call('HSET', KEYS[1], id, ARGV[i + 2]) end
    local entry = cjson.decode(ARGV[i + 2])
    local ident = identity(entry)
    if ident then
      local cur = redis.call('HGET', base .. 'row:' .. entry.job, ident)
      local listed = false
      if cur then for x in string.gmatch(cur, '%S+') do if x == id then listed = true end end end
      if not listed then
        rowAdd(base, entry.job, ident, id)
        indexed = indexed + 1
      end
    end
  end
end
return indexed
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
  resolve: script('resolve', RESOLVE),
  move: script('move', MOVE),
  adopt: script('adopt', ADOPT),
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
