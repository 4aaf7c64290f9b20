/**
 * How a two-way run saves the conflicts it planned: compare-and-set against the conflicts
 * it read. A person may resolve a conflict (`conflicts resolve`, the dashboard) while a
 * run is between its read and its writes; that run planned from the conflict as it was,
 * so overwriting it (or dropping it) would lose the person's decision. Each conflict is
 * saved or dropped only while it still holds what the run read, in one script per batch
 * (atomic against the resolve's write); one that changed is left as the person set it,
 * and the next run applies it (a record with a conflict is always read whole).
 */
import type { Conflict } from './link-store.ts';
import type { RedisClient } from '../state/redis-types.ts';
import { stateKey } from '../state/redis-types.ts';

/** Conflicts per script call. */
const BATCH = 200;

// ARGV: triples of id, the JSON the run read ('' when none), the JSON to save ('' to drop).
const COMPARE_AND_SET = `
local skipped = {}
for i = 1, #ARGV, 3 do
  local current = redis.call('HGET', KEYS[1], ARGV[i]) or ''
  if current == ARGV[i + 1] then
    if ARGV[i + 2] == '' then redis.call('HDEL', KEYS[1], ARGV[i])
    else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2]) end
  else
    skipped[#skipped + 1] = ARGV[i]
  end
end
return skipped
`;

/**
 * Saves `raise` and drops `clear` where the stored conflict is still the one in `seen`
 * (the conflicts as the run read them); answers the ids left alone because they changed.
 */
export async function commitConflicts(
  deps: { redis: RedisClient; prefix: string; job: string },
  seen: ReadonlyMap<string, Conflict>,
  raise: readonly Conflict[],
  clear: readonly string[],
): Promise<string[]> {
  const key = stateKey(deps.prefix, 'twoway', deps.job, 'conflicts');
  const read = (id: string) => {
    const c = seen.get(id);
    return c === undefined ? '' : JSON.stringify(c);
  };
  const ops: string[][] = [
    ...raise.map((c) => [c.id, read(c.id), JSON.stringify(c)]),
    ...clear.map((id) => [id, read(id), '']),
  ];
  const skipped: string[] = [];
  for (let i = 0; i < ops.length; i += BATCH) {
    const args = ops.slice(i, i + BATCH).flat();
    skipped.push(...((await deps.redis.eval(COMPARE_AND_SET, 1, key, ...args)) as string[]));
  }
  return skipped;
}
