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
  /** The hash of the run's report counters, for another store's script to add to atomically. */
  tallyKey(runId: string): string;
  /** Mirror: keys the source had in this run. */
  markSeen(runId: string, keys: readonly string[]): Promise<void>;
  isSeen(runId: string, keys: readonly string[]): Promise<boolean[]>;
  /** Drops the per-row bookkeeping of a finished run (the record and report stay). */
  dropRowState(runId: string): Promise<void>;
}

// Moves each outcome once: a batch retried after a crash re-sets the same outcomes
// without counting them twice. ARGV holds pairs of an outcome and the comma-joined
// indexes that get it (a batch's rows mostly share one outcome: two arguments instead
// of two per row, which ioredis encoded one by one). Counters move once per outcome per
// call. Returns the final outcomes it moved, as flat pairs.
const SET_OUTCOMES = `
local delta, moved = {}, {}
for i = 1, #ARGV, 2 do
  local new = ARGV[i]
  local indexes = {}
  for index in string.gmatch(ARGV[i + 1], '[^,]+') do indexes[#indexes + 1] = index end
  for first = 1, #indexes, 500 do
    local last = math.min(first + 499, #indexes)
    local olds = redis.call('HMGET', KEYS[1], unpack(indexes, first, last))
    local changed = {}
    for k = first, last do
      local old = olds[k - first + 1]
      if old ~= new then
        changed[#changed + 1] = indexes[k]
        changed[#changed + 1] = new
        if old then delta[old] = (delta[old] or 0) - 1 end
        delta[new] = (delta[new] or 0) + 1
        if new ~= 'pending' then moved[new] = (moved[new] or 0) + 1 end
      end
    end
    if #changed > 0 then redis.call('HSET', KEYS[1], unpack(changed)) end
  end
end
for outcome, n in pairs(delta) do redis.call('HINCRBY', KEYS[2], outcome, n) end
local out = {}
for outcome, n in pairs(moved) do
  out[#out + 1] = outcome
  out[#out + 1] = n
end
return out`;

const CLEAR_OUTCOMES = `
for i = 1, #ARGV do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old then
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('HINCRBY', KEYS[2], old, -1)
  end
end
return 1`;

export function createOutcomeLedger(
  keys: RunKeys,
  onRecorded?: (moved: Readonly<Record<string, number>>) => void,
): OutcomeLedger {
  const { redis } = keys;
  return {
    async setOutcomes(runId, outcomes) {
      if (outcomes.size === 0) return {};
      const byOutcome = new Map<RowOutcome, number[]>();
      for (const [index, outcome] of outcomes) {
        const indexes = byOutcome.get(outcome);
        if (indexes === undefined) byOutcome.set(outcome, [index]);
        else indexes.push(index);
      }
      const args: string[] = [];
      for (const [outcome, indexes] of byOutcome) args.push(outcome, indexes.join(','));
      // Each write renews the expiry: a run abandoned without a word (its process and
      // every resume gone) does not keep its row bookkeeping forever.
      const results = await redis
        .multi()
        .eval(SET_OUTCOMES, 2, keys.outcomes(runId), keys.counts(runId), ...args)
        .expire(keys.outcomes(runId), keys.rowStateTtl)
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
      const values = await redis.hmget(keys.outcomes(runId), ...indexes.map(String));
      indexes.forEach((index, i) => {
        const v = values[i];
        if (v != null) out.set(index, v as RowOutcome);
      });
      return out;
    },
    async clearOutcomes(runId, indexes) {
      if (indexes.length === 0) return;
      await redis.eval(CLEAR_OUTCOMES, 2, keys.outcomes(runId), keys.counts(runId), ...indexes.map(String));
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
        .del(keys.outcomes(runId))
        .del(keys.seen(runId))
        .expire(keys.counts(runId), keys.retentionSeconds)
        .exec();
    },
  };
}
