import type { ErrorCategory } from '../../ground/errors.ts';
import type { RunKeys } from './run-keys.ts';

/** What happened to one source record. `dead:<category>` when it was dead-lettered. */
export type RowOutcome =
  'pending' | 'created' | 'updated' | 'unchanged' | 'skipped' | 'duplicate' | `dead:${ErrorCategory}`;

/**
 * The exactly-once ledger of a run: the outcome of every source row by its index, the
 * counters those outcomes move (exactly once per change), and, for mirror runs, the keys
 * the source had. A retried batch re-sets the same outcomes and counts nothing twice.
 */
export interface OutcomeLedger {
  /**
   * Outcomes of source records by their index; counters move exactly once per change.
   * Resolves to the final outcomes newly recorded (not `pending`, not ones already
   * recorded), by outcome: what live metrics count.
   */
  setOutcomes(runId: string, outcomes: ReadonlyMap<number, RowOutcome>): Promise<Record<string, number>>;
  getOutcomes(runId: string, indexes: readonly number[]): Promise<Map<number, RowOutcome>>;
  /** Forgets outcomes (a create that certainly did not happen is no longer pending). */
  clearOutcomes(runId: string, indexes: readonly number[]): Promise<void>;
  /**
   * Drops the outcomes of rows below `index`, which no replay asks for again (a change
   * stream's acknowledged position); counters stay. Keeps an endless run's ledger bounded.
   */
  forgetOutcomesBelow(runId: string, index: number): Promise<void>;
  /** The hash of the run's report counters, for another store's script to add to atomically. */
  tallyKey(runId: string): string;
  /** Mirror: keys the source had in this run. */
  markSeen(runId: string, keys: readonly string[]): Promise<void>;
  isSeen(runId: string, keys: readonly string[]): Promise<boolean[]>;
  /** Drops the per-row bookkeeping of a finished run (the record and report stay). */
  dropRowState(runId: string): Promise<void>;
}

/**
 * The ledger's one byte per outcome. Stored in Redis for as long as a run can be resumed:
 * never change a letter, only add new ones. A byte 0 is a row without an outcome.
 */
const OUTCOME_CODES = {
  pending: 'p',
  created: 'c',
  updated: 'u',
  unchanged: 'n',
  skipped: 's',
  duplicate: 'd',
  'dead:throttled': 'T',
  'dead:transient': 'R',
  'dead:ambiguous': 'A',
  'dead:auth-refresh': 'H',
  'dead:auth': 'U',
  'dead:config': 'C',
  'dead:forbidden': 'F',
  'dead:app-unavailable': 'V',
  'dead:invalid-row': 'I',
  'dead:conflict': 'K',
  'dead:not-found': 'N',
  'dead:quota': 'Q',
  'dead:unknown': 'X',
} as const satisfies Record<RowOutcome, string>;

const OUTCOME_OF_CODE = new Map<string, RowOutcome>(
  Object.entries(OUTCOME_CODES).map(([outcome, code]) => [code, outcome as RowOutcome]),
);

/**
 * Rows per field of the ledger hash. The ledger is a hash of segments rather than one
 * string because row indexes are sparse: chunk n of a backfill numbers its rows from
 * n × 10⁹ (src/queue/chunk-processor.ts).
 */
const SEGMENT = 1024;

// Lua shared by the scripts: the segment size and the outcome of each code.
const LUA_TABLES = `
local SEG = ${SEGMENT}
local NAME = {${Object.entries(OUTCOME_CODES)
  .map(([outcome, code]) => `[${JSON.stringify(code)}]=${JSON.stringify(outcome)}`)
  .join(',')}}
local function int(x) return string.format('%d', x) end
`;

// Moves each outcome once: a batch retried after a crash re-sets the same outcomes
// without counting them twice. KEYS: the ledger, the counters. ARGV holds pairs of an outcome's code and the ranges of row indexes that get
// it ("first-last,first-last"): a batch is mostly one range with one outcome, so a call
// reads and writes one or two segments, and compares a range whose bytes are all alike
// at once. Counters move once per outcome per call. Returns the final outcomes it moved,
// as flat pairs.
const SET_OUTCOMES = `${LUA_TABLES}
local segs, delta, moved = {}, {}, {}
local function count(old, new, n)
  if old == new then return end
  if old then delta[old] = (delta[old] or 0) - n end
  delta[new] = (delta[new] or 0) + n
  if new ~= 'pending' then moved[new] = (moved[new] or 0) + n end
end
for i = 1, #ARGV, 2 do
  local code = ARGV[i]
  local new = NAME[code]
  for a, b in string.gmatch(ARGV[i + 1], '(%d+)-(%d+)') do
    local index, last = tonumber(a), tonumber(b)
    while index <= last do
      local n = math.floor(index / SEG)
      local base = n * SEG
      local from, to = index - base, math.min(last - base, SEG - 1)
      local len = to - from + 1
      local s = segs[n] or redis.call('HGET', KEYS[1], int(n)) or ''
      if #s <= to then s = s .. string.rep('\\0', to + 1 - #s) end
      local slice = string.sub(s, from + 1, to + 1)
      local first = string.sub(slice, 1, 1)
      if slice == string.rep(first, len) then
        count(NAME[first], new, len)
      else
        for k = 1, len do count(NAME[string.sub(slice, k, k)], new, 1) end
      end
      segs[n] = string.sub(s, 1, from) .. string.rep(code, len) .. string.sub(s, to + 2)
      index = base + to + 1
    end
  end
end
local fields = {}
for n, s in pairs(segs) do
  fields[#fields + 1] = int(n)
  fields[#fields + 1] = s
end
if #fields > 0 then redis.call('HSET', KEYS[1], unpack(fields)) end
for outcome, n in pairs(delta) do
  if n ~= 0 then redis.call('HINCRBY', KEYS[2], outcome, n) end
end
local out = {}
for outcome, n in pairs(moved) do
  out[#out + 1] = outcome
  out[#out + 1] = n
end
return out`;

// The codes of the rows in each range of ARGV[1] ("first-last,..."): one string per
// range, a byte 0 where a row has no outcome. KEYS: the ledger.
const GET_OUTCOMES = `${LUA_TABLES}
local segs, out = {}, {}
for a, b in string.gmatch(ARGV[1], '(%d+)-(%d+)') do
  local first, last = tonumber(a), tonumber(b)
  local parts, index = {}, first
  while index <= last do
    local n = math.floor(index / SEG)
    local base = n * SEG
    local to = math.min(last - base, SEG - 1)
    local s = segs[n]
    if s == nil then
      s = redis.call('HGET', KEYS[1], int(n)) or ''
      segs[n] = s
    end
    local slice = string.sub(s, index - base + 1, to + 1)
    parts[#parts + 1] = slice .. string.rep('\\0', to - (index - base) + 1 - #slice)
    index = base + to + 1
  end
  out[#out + 1] = table.concat(parts)
end
return out`;

// Forgets the outcomes of the rows in the ranges of ARGV[1] and takes them out of the
// counters. KEYS: the ledger, the counters.
const CLEAR_OUTCOMES = `${LUA_TABLES}
local segs = {}
for a, b in string.gmatch(ARGV[1], '(%d+)-(%d+)') do
  for index = tonumber(a), tonumber(b) do
    local n = math.floor(index / SEG)
    local at = index - n * SEG + 1
    local s = segs[n] or redis.call('HGET', KEYS[1], int(n)) or ''
    local old = NAME[string.sub(s, at, at)]
    if old then segs[n] = string.sub(s, 1, at - 1) .. '\\0' .. string.sub(s, at + 1) end
    if old then redis.call('HINCRBY', KEYS[2], old, -1) end
  end
end
for n, s in pairs(segs) do redis.call('HSET', KEYS[1], int(n), s) end
return 1`;

// Drops the segments wholly below ARGV[1], 1000 fields a call. KEYS: the ledger.
const FORGET_BELOW = `${LUA_TABLES}
local below, gone = math.floor(tonumber(ARGV[1]) / SEG), {}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if tonumber(f) < below then gone[#gone + 1] = f end
  if #gone == 1000 then redis.call('HDEL', KEYS[1], unpack(gone)); gone = {} end
end
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
return 1`;

/**
 * Row indexes as ranges of consecutive ones, in the order given ("3-7,9-9"): a batch's
 * rows are one range, where a list of its indexes was about 6 KB per 1,000 rows.
 */
export function indexRanges(indexes: Iterable<number>): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let open: [number, number] | undefined;
  for (const index of indexes) {
    if (!Number.isSafeInteger(index) || index < 0)
      throw new RangeError(`row index ${index} is not a natural number`);
    if (open !== undefined && index === open[1] + 1) open[1] = index;
    else ranges.push((open = [index, index]));
  }
  return ranges;
}

const rangesArg = (ranges: ReadonlyArray<[number, number]>): string =>
  ranges.map(([first, last]) => `${first}-${last}`).join(',');

export function createOutcomeLedger(
  keys: RunKeys,
  onRecorded?: (moved: Readonly<Record<string, number>>) => void,
): OutcomeLedger {
  const { redis } = keys;
  return {
    async setOutcomes(runId, outcomes) {
      if (outcomes.size === 0) return {};
      // forEach, not for...of: no [index, outcome] pair is made per row.
      const byOutcome = new Map<RowOutcome, number[]>();
      outcomes.forEach((outcome, index) => {
        const indexes = byOutcome.get(outcome);
        if (indexes === undefined) byOutcome.set(outcome, [index]);
        else indexes.push(index);
      });
      const args: string[] = [];
      for (const [outcome, indexes] of byOutcome)
        args.push(OUTCOME_CODES[outcome], rangesArg(indexRanges(indexes)));
      // Each write renews the expiry: a run abandoned without a word (its process and
      // every resume gone) does not keep its row bookkeeping forever.
      const results = await redis
        .multi()
        .eval(SET_OUTCOMES, 2, keys.ledger(runId), keys.counts(runId), ...args)
        .expire(keys.ledger(runId), keys.rowStateTtl)
        .expire(keys.counts(runId), Math.max(keys.rowStateTtl, keys.retentionSeconds))
        .exec();
      const [err, flat] = results?.[0] ?? [];
      if (err) throw err;
      const moved: Record<string, number> = {};
      const pairs = Array.isArray(flat) ? (flat as Array<string | number>) : [];
      for (let i = 0; i + 1 < pairs.length; i += 2) moved[String(pairs[i])] = Number(pairs[i + 1]);
      if (pairs.length > 0) onRecorded?.(moved);
      return moved;
    },
    tallyKey: (runId) => keys.counts(runId),
    async getOutcomes(runId, indexes) {
      const out = new Map<number, RowOutcome>();
      if (indexes.length === 0) return out;
      const ranges = indexRanges(indexes);
      const codes = (await redis.eval(GET_OUTCOMES, 1, keys.ledger(runId), rangesArg(ranges))) as string[];
      ranges.forEach(([first], r) => {
        const range = codes[r] ?? '';
        for (let k = 0; k < range.length; k++) {
          const code = range[k]!;
          if (code === '\0') continue;
          const outcome = OUTCOME_OF_CODE.get(code);
          if (outcome === undefined)
            throw new Error(
              `the outcome ledger of run ${runId} holds an unknown code ${JSON.stringify(code)} for row ${first + k}`,
            );
          out.set(first + k, outcome);
        }
      });
      return out;
    },
    async clearOutcomes(runId, indexes) {
      if (indexes.length === 0) return;
      await redis.eval(
        CLEAR_OUTCOMES,
        2,
        keys.ledger(runId),
        keys.counts(runId),
        rangesArg(indexRanges(indexes)),
      );
    },
    async forgetOutcomesBelow(runId, index) {
      await redis.eval(FORGET_BELOW, 1, keys.ledger(runId), String(index));
    },
    async markSeen(runId, seenKeys) {
      if (seenKeys.length === 0) return;
      await redis
        .multi()
        .sadd(keys.seen(runId), ...seenKeys)
        .expire(keys.seen(runId), keys.retentionSeconds)
        .exec();
    },
    async isSeen(runId, seenKeys) {
      if (seenKeys.length === 0) return [];
      const flags = await redis.smismember(keys.seen(runId), ...seenKeys);
      return flags.map((f) => f === 1);
    },
    async dropRowState(runId) {
      await redis
        .multi()
        .del(keys.ledger(runId))
        .del(keys.seen(runId))
        .expire(keys.counts(runId), keys.retentionSeconds)
        .exec();
    },
  };
}
