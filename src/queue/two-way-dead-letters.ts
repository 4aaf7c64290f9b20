/**
 * The records a two-way run could not write (a relation key no related row holds, an
 * option the worksheet lacks, a value the platform refused with its code, a value the
 * table's database refused: a unique or CHECK violation, a value too long, with its
 * SQLSTATE or MySQL errno) as dead letters, so `dlq list` and the run's report show
 * them. The engine retries them by itself: such a record stays different on the two sides,
 * so every run tries it again. Each run therefore replaces the job's earlier two-way dead
 * letters with its own: what `dlq list` shows is what is refused now, and a record fixed
 * on either side leaves the list at the next run.
 */
import type { ErrorCategory } from '../ground/errors.ts';
import type { DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import { stateKey } from '../sync/state/redis-types.ts';
import type { RedisClient } from '../sync/state/redis-types.ts';
import type { TwoWayReport } from '../sync/two-way/two-way-run.ts';

const CATEGORY: ErrorCategory = 'invalid-row';

/** What recording them needs. */
export interface TwoWayDeadLetterDeps {
  deadLetters: DeadLetterStore;
  redis: RedisClient;
  statePrefix: string;
}

/** Dead-letters `rejected` for `runId`, after removing the job's dead letters of earlier runs. */
export async function deadLetterTwoWay(
  deps: TwoWayDeadLetterDeps,
  job: string,
  runId: string,
  rejected: TwoWayReport['rejected'],
): Promise<number> {
  const earlier: string[] = [];
  for await (const entry of deps.deadLetters.iterate({ job }))
    if (entry.runId !== runId) earlier.push(entry.id);
  if (earlier.length > 0) await deps.deadLetters.remove(earlier);
  if (rejected.length === 0) return 0;
  await deps.deadLetters.add(
    rejected.map((r, index) => {
      const field = r.field ?? fieldOf(r.reason);
      return {
        id: `${runId}:${index}`,
        job,
        runId,
        category: CATEGORY,
        ...(r.errorCode === undefined ? {} : { errorCode: r.errorCode }),
        message: messageOf(job, r, field),
        ...(field === undefined ? {} : { field }),
        source: { data: { key: r.key }, position: { index, id: r.key } },
        key: r.key,
        attempts: 1,
      };
    }),
  );
  await deps.redis.hincrby(
    stateKey(deps.statePrefix, 'run', runId, 'counts'),
    `dead:${CATEGORY}`,
    rejected.length,
  );
  return rejected.length;
}

/** Names the job, the side, the record, the field and the platform's code. */
function messageOf(job: string, r: TwoWayReport['rejected'][number], field: string | undefined): string {
  const by = r.where === undefined ? '' : ` by ${r.where}`;
  const code =
    r.errorCode === undefined || r.reason.includes(String(r.errorCode))
      ? ''
      : ` (platform error ${r.errorCode})`;
  const what = field === undefined || r.reason.startsWith(`${field}: `) ? '' : `field ${field}: `;
  return `two-way job ${job}: record ${r.record ?? r.key} was refused${by}: ${what}${r.reason}${code}; the next run tries it again`;
}

/** The field a reason starts with (`customer: no row in ...`). */
function fieldOf(reason: string): string | undefined {
  const at = reason.indexOf(': ');
  return at > 0 ? reason.slice(0, at) : undefined;
}
