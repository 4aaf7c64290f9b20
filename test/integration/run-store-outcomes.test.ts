import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunStore } from '../../src/sync/state/run-store.ts';
import type { RowOutcome } from '../../src/sync/state/run-store.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const PREFIX = `rbtest-outcomes-${process.pid}`;

/**
 * The run store's outcome ledger: what makes the run report count each source record
 * once however often a batch is retried. Real Redis, one run id per test.
 */
describe('run store outcome ledger', () => {
  let redis: Redis;
  let n = 0;
  const recorded: Array<Record<string, number>> = [];
  const store = () =>
    createRunStore({
      redis,
      prefix: PREFIX,
      rowStateTtlSeconds: 600,
      retentionSeconds: 900,
      onRecorded: (moved) => recorded.push({ ...moved }),
    });
  const newRun = () => `run-${++n}`;
  const outcomes = (pairs: Array<[number, RowOutcome]>) => new Map<number, RowOutcome>(pairs);

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeys(`${PREFIX}:*`);
    await redis.quit();
  });

  it('records outcomes by record index and counts them in the report', async () => {
    const runs = store();
    const runId = newRun();
    const moved = await runs.setOutcomes(
      runId,
      outcomes([
        [0, 'created'],
        [1, 'created'],
        [2, 'updated'],
        [3, 'unchanged'],
        [4, 'skipped'],
        [5, 'duplicate'],
        [6, 'dead:invalid-row'],
      ]),
    );
    expect(moved).toEqual({
      created: 2,
      updated: 1,
      unchanged: 1,
      skipped: 1,
      duplicate: 1,
      'dead:invalid-row': 1,
    });
    const got = await runs.getOutcomes(runId, [0, 2, 6, 7]);
    // Index 7 was never recorded: it is absent, not undefined or ''.
    expect([...got.entries()]).toEqual([
      [0, 'created'],
      [2, 'updated'],
      [6, 'dead:invalid-row'],
    ]);
    const report = await runs.report(runId);
    expect(report).toMatchObject({
      created: 2,
      updated: 1,
      unchanged: 1,
      skipped: 2,
      deadLettered: { 'invalid-row': 1 },
      deadLetteredTotal: 1,
    });
  });

  it('a retried batch setting the same outcomes again counts nothing twice and reports nothing moved', async () => {
    const runs = store();
    const runId = newRun();
    const batch = outcomes([
      [10, 'created'],
      [11, 'updated'],
    ]);
    recorded.length = 0;
    expect(await runs.setOutcomes(runId, batch)).toEqual({ created: 1, updated: 1 });
    expect(await runs.setOutcomes(runId, batch)).toEqual({});
    expect(await runs.setOutcomes(runId, batch)).toEqual({});
    // Live metrics hear of the rows once.
    expect(recorded).toEqual([{ created: 1, updated: 1 }]);
    expect(await runs.report(runId)).toMatchObject({ created: 1, updated: 1 });
  });

  it('a pending create confirmed later moves from pending to created: counted once, pending not a final outcome', async () => {
    const runs = store();
    const runId = newRun();
    recorded.length = 0;
    expect(
      await runs.setOutcomes(
        runId,
        outcomes([
          [0, 'pending'],
          [1, 'pending'],
        ]),
      ),
    ).toEqual({});
    expect(recorded).toEqual([]);
    expect(await runs.setOutcomes(runId, outcomes([[0, 'created']]))).toEqual({ created: 1 });
    const counts = await redis.hgetall(`${PREFIX}:run:${runId}:counts`);
    expect(Number(counts.pending)).toBe(1);
    expect(Number(counts.created)).toBe(1);
    // A row that failed after all: its outcome changes from created to dead, counted once.
    expect(await runs.setOutcomes(runId, outcomes([[0, 'dead:transient']]))).toEqual({ 'dead:transient': 1 });
    expect(await runs.report(runId)).toMatchObject({
      created: 0,
      deadLettered: { transient: 1 },
      deadLetteredTotal: 1,
    });
  });

  it('clearing outcomes forgets them and takes them out of the counts; unknown indexes are ignored', async () => {
    const runs = store();
    const runId = newRun();
    await runs.setOutcomes(
      runId,
      outcomes([
        [0, 'pending'],
        [1, 'pending'],
        [2, 'created'],
      ]),
    );
    await runs.clearOutcomes(runId, [0, 5]);
    expect([...(await runs.getOutcomes(runId, [0, 1, 2])).keys()]).toEqual([1, 2]);
    const counts = await redis.hgetall(`${PREFIX}:run:${runId}:counts`);
    expect(Number(counts.pending)).toBe(1);
    expect(Number(counts.created)).toBe(1);
    // Cleared, the create is recorded afresh and counted.
    expect(await runs.setOutcomes(runId, outcomes([[0, 'created']]))).toEqual({ created: 1 });
    expect((await runs.report(runId)).created).toBe(2);
  });

  it('empty calls touch nothing: no outcome, no count, no key', async () => {
    const runs = store();
    const runId = newRun();
    recorded.length = 0;
    expect(await runs.setOutcomes(runId, new Map())).toEqual({});
    expect((await runs.getOutcomes(runId, [])).size).toBe(0);
    await runs.clearOutcomes(runId, []);
    expect(recorded).toEqual([]);
    expect(await redis.exists(`${PREFIX}:run:${runId}:ledger`, `${PREFIX}:run:${runId}:counts`)).toBe(0);
  });

  it('the mirror seen-set answers per key, in order; nothing asked, nothing answered', async () => {
    const runs = store();
    const runId = newRun();
    await runs.markSeen(runId, ['K1', 'K3']);
    await runs.markSeen(runId, []);
    expect(await runs.isSeen(runId, ['K1', 'K2', 'K3'])).toEqual([true, false, true]);
    expect(await runs.isSeen(runId, [])).toEqual([]);
    expect(await redis.ttl(`${PREFIX}:run:${runId}:seen`)).toBeGreaterThan(890);
  });

  it('moves a batch job of thousands of mixed outcomes once, across the script’s 500-index slices', async () => {
    const runs = store();
    const runId = newRun();
    const indexes = Array.from({ length: 2_345 }, (_, i) => i * 7);
    await runs.setOutcomes(runId, new Map(indexes.map((i) => [i, 'pending'] as const)));
    expect((await runs.report(runId)).created).toBe(0);
    // The create answered: most landed, a few were dead-lettered, some stay pending.
    const final = new Map<number, RowOutcome>(
      indexes.map((i, k) => [i, k % 10 === 0 ? 'dead:invalid-row' : k % 10 === 1 ? 'pending' : 'created']),
    );
    const moved = await runs.setOutcomes(runId, final);
    expect(moved).toEqual({ created: 1_875, 'dead:invalid-row': 235 });
    // Recorded again, as a retried batch does: nothing moves, nothing is counted twice.
    expect(await runs.setOutcomes(runId, final)).toEqual({});
    const report = await runs.report(runId);
    expect(report).toMatchObject({ created: 1_875, deadLetteredTotal: 235 });
    const got = await runs.getOutcomes(runId, [0, 7, 14, 70, 16_408, 16_415]);
    expect([...got]).toEqual([
      [0, 'dead:invalid-row'],
      [7, 'pending'],
      [14, 'created'],
      [70, 'dead:invalid-row'],
      [16_408, 'created'],
    ]);
    expect(Number(await redis.hget(`${PREFIX}:run:${runId}:counts`, 'pending'))).toBe(235);
  });

  it('dropping a run’s row state forgets its outcomes and seen keys but keeps its report', async () => {
    const runs = store();
    const runId = newRun();
    await runs.setOutcomes(runId, outcomes([[0, 'created']]));
    await runs.markSeen(runId, ['K1']);
    await runs.dropRowState(runId);
    expect((await runs.getOutcomes(runId, [0])).size).toBe(0);
    expect(await runs.isSeen(runId, ['K1'])).toEqual([false]);
    expect((await runs.report(runId)).created).toBe(1);
    expect(await redis.ttl(`${PREFIX}:run:${runId}:counts`)).toBeGreaterThan(890);
  });

  it('row bookkeeping expires: outcomes after the row-state TTL, counts no sooner than the run record', async () => {
    const runs = store();
    const runId = newRun();
    await runs.setOutcomes(runId, outcomes([[0, 'created']]));
    const outcomesTtl = await redis.ttl(`${PREFIX}:run:${runId}:ledger`);
    const countsTtl = await redis.ttl(`${PREFIX}:run:${runId}:counts`);
    expect(outcomesTtl).toBeGreaterThan(590);
    expect(outcomesTtl).toBeLessThanOrEqual(600);
    // The report outlives the row bookkeeping: counts keep as long as the run record.
    expect(countsTtl).toBeGreaterThan(890);
    expect(countsTtl).toBeLessThanOrEqual(900);
  });

  it('keeps a byte per row: 100,000 outcomes in 1,000-row batches take about 100 KB of Redis, and read back', async () => {
    const runs = store();
    const runId = newRun();
    for (let first = 0; first < 100_000; first += 1000) {
      const batch = Array.from({ length: 1000 }, (_, i) => first + i);
      await runs.setOutcomes(runId, new Map(batch.map((i) => [i, 'pending'] as const)));
      await runs.setOutcomes(
        runId,
        new Map(batch.map((i) => [i, i % 100 === 99 ? 'dead:invalid-row' : 'created'] as const)),
      );
    }
    const bytes = Number(await redis.memory('USAGE', `${PREFIX}:run:${runId}:ledger`));
    // A hash with a field per row took about 58 bytes a row: 5.8 MB for these.
    expect(bytes).toBeGreaterThan(100_000);
    expect(bytes).toBeLessThan(130_000);
    expect(await runs.report(runId)).toMatchObject({ created: 99_000, deadLetteredTotal: 1_000 });
    expect(Number(await redis.hget(`${PREFIX}:run:${runId}:counts`, 'pending'))).toBe(0);
    const got = await runs.getOutcomes(runId, [0, 98, 99, 1023, 1024, 99_999, 100_000]);
    expect([...got]).toEqual([
      [0, 'created'],
      [98, 'created'],
      [99, 'dead:invalid-row'],
      [1023, 'created'],
      [1024, 'created'],
      [99_999, 'dead:invalid-row'],
    ]);
  });

  it('batches across segment borders and the sparse indexes of backfill chunks (n × 10⁹) each keep their own outcome', async () => {
    const runs = store();
    const runId = newRun();
    const chunk2 = 2_000_000_000;
    // 1,000 rows from 1,000: rows 1,000..1,023 end one segment, the rest start the next.
    const rows = [
      ...Array.from({ length: 1000 }, (_, i) => 1000 + i),
      ...Array.from({ length: 5 }, (_, i) => chunk2 + 1020 + i),
    ];
    await runs.setOutcomes(runId, new Map(rows.map((i) => [i, 'pending'] as const)));
    const final = new Map<number, RowOutcome>(rows.map((i) => [i, i % 3 === 0 ? 'updated' : 'created']));
    const moved = await runs.setOutcomes(runId, final);
    const updated = rows.filter((i) => i % 3 === 0).length;
    expect(moved).toEqual({ updated, created: rows.length - updated });
    const got = await runs.getOutcomes(runId, [999, ...rows, chunk2 + 1019, chunk2 + 1025]);
    expect(got).toEqual(final);
    await runs.clearOutcomes(runId, [1023, 1024, chunk2 + 1023]);
    const after = await runs.getOutcomes(runId, [
      1022,
      1023,
      1024,
      1025,
      chunk2 + 1022,
      chunk2 + 1023,
      chunk2 + 1024,
    ]);
    expect([...after.keys()]).toEqual([1022, 1025, chunk2 + 1022, chunk2 + 1024]);
    expect((await runs.report(runId)).created + (await runs.report(runId)).updated).toBe(rows.length - 3);
  });

  it('refuses a row index that is not a natural number before anything is written', async () => {
    const runs = store();
    const runId = newRun();
    await expect(runs.setOutcomes(runId, outcomes([[-1, 'created']]))).rejects.toThrow(/row index -1/);
    await expect(runs.getOutcomes(runId, [1.5])).rejects.toThrow(/row index 1.5/);
    expect(await redis.exists(`${PREFIX}:run:${runId}:ledger`, `${PREFIX}:run:${runId}:counts`)).toBe(0);
  });
});
