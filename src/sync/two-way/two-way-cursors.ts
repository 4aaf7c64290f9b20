/**
 * Where the next two-way run of a job starts reading: per side, the cursor its changed
 * rows are read past (the worksheet's `_updatedAt`, the table's `updatedAtColumn`, as
 * epoch ms), the table keys to read whole again whatever their time (a write the run could
 * not make, a row the run wrote itself), and, for a table without `updatedAtColumn`, the
 * short hash of each record's mapped columns as last seen (a record whose hash differs is
 * read whole). Kept beside the links, under the job's state, without expiry.
 *
 * Saved like a checkpoint: only after every write of the run is confirmed and recorded
 * (two-way-run.ts calls {@link CursorStore.save} last), so a run stopped at any point
 * leaves the cursors where the previous run put them and the next reads those changes
 * again. A cursor is never past its side's clock at the start of the reads, less the
 * margin `ROWBRIDGE_CURSOR_MARGIN_SECONDS` (read-sides.ts, cursor-cap.ts): the platform's
 * clock for the worksheet, the database's for the table. The state is one JSON value
 * written by one SET. A cursor saved for another shape
 * of the job (its source, fields or key) is not used: that run reads both sides whole.
 */
import { createHash } from 'node:crypto';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { RedisClient } from '../state/redis-types.ts';
import { stateKey } from '../state/redis-types.ts';

/** The saved cursors of a two-way job. */
export interface TwoWayCursors {
  /** {@link twoWayShape} of the job that saved them. */
  shape: string;
  /** Rows updated at or after this (epoch ms) are read whole. */
  worksheet: number;
  /** Records whose `updatedAtColumn` is at or after this (epoch ms), or null, are read whole. */
  source?: number;
  /** Table keys read whole at the next run whatever their update time. */
  recheck: string[];
}

/** The stored cursors and row hashes of one job. */
export interface CursorStore {
  /** The cursors, unless none were saved or they were saved for another shape. */
  read(shape: string): Promise<TwoWayCursors | undefined>;
  /** Row hashes of a table without `updatedAtColumn`: table key → hash. */
  rowHashes(): Promise<Map<string, string>>;
  /** The same, handed over a page at a time. */
  eachRowHash(each: (key: string, hash: string) => void): Promise<void>;
  /** Sets and drops row hashes, then saves the cursors (in that order: see the header). */
  save(
    cursors: TwoWayCursors,
    rowHashes?: { set: ReadonlyMap<string, string>; drop: readonly string[] },
  ): Promise<void>;
}

/** The fingerprint of what decides the records a run compares: its sides, fields and key. */
export function twoWayShape(spec: Pick<JobSpec, 'source' | 'mappings' | 'target'>): string {
  const shape = {
    source: spec.source,
    fields: spec.mappings,
    worksheet: spec.target?.worksheet ?? null,
    key: spec.target?.key ?? null,
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}

/** The cursor store of `job` under `prefix`. */
export function createCursorStore(deps: { redis: RedisClient; prefix: string; job: string }): CursorStore {
  const { redis } = deps;
  const cursorKey = stateKey(deps.prefix, 'twoway', deps.job, 'cursors');
  const hashKey = stateKey(deps.prefix, 'twoway', deps.job, 'rowhash');
  // A page at a time (HSCAN may give a key twice: with the same hash).
  async function eachRowHash(each: (key: string, hash: string) => void): Promise<void> {
    let cursor = '0';
    do {
      const [next, flat] = await redis.hscan(hashKey, cursor, 'COUNT', 1000);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) each(flat[i]!, flat[i + 1]!);
    } while (cursor !== '0');
  }
  return {
    async read(shape) {
      const json = await redis.get(cursorKey);
      if (json === null) return undefined;
      const saved = JSON.parse(json) as TwoWayCursors;
      return saved.shape === shape ? saved : undefined;
    },
    async rowHashes() {
      const hashes = new Map<string, string>();
      await eachRowHash((key, hash) => hashes.set(key, hash));
      return hashes;
    },
    eachRowHash,
    async save(cursors, rowHashes) {
      if (rowHashes !== undefined) {
        const set = [...rowHashes.set];
        for (let i = 0; i < set.length; i += 1000)
          await redis.hset(hashKey, Object.fromEntries(set.slice(i, i + 1000)));
        for (let i = 0; i < rowHashes.drop.length; i += 1000)
          await redis.hdel(hashKey, ...rowHashes.drop.slice(i, i + 1000));
      }
      await redis.set(cursorKey, JSON.stringify(cursors));
    },
  };
}
