import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { ApiError } from '../../src/ground/errors.ts';
import type { ErrorCategory } from '../../src/ground/errors.ts';
import { createLogger } from '../../src/ground/logger.ts';
import type { BatchRow, RowToWrite } from '../../src/sync/batch/batch-row.ts';
import { throughJob } from '../helpers/batch-rows.ts';
import { createSyncContext } from '../../src/sync/write/create-sync-context.ts';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { mapRecord } from '../../src/sync/mapping/map-record.ts';
import { validateMapping } from '../../src/sync/mapping/validate-mapping.ts';
import { createDeadLetterStore } from '../../src/sync/state/dead-letter-store.ts';
import { createRunStore } from '../../src/sync/state/run-store.ts';
import type { SyncContext } from '../../src/sync/write/sync-context.ts';
import { deadLetterRows, writeBatch } from '../../src/sync/write/write-batch.ts';
import { startScriptedPlatform } from '../helpers/scripted-platform.ts';
import type { ScriptedPlatform } from '../helpers/scripted-platform.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const PREFIX = `rbtest-wbfail-${process.pid}`;
const WS = '66b2a41c9e07d35f18c4b302';
const NO = '66b2a41c9e07d35f18c4d511';
const NAME = '66b2a41c9e07d35f18c4d512';
const structure: WorksheetStructure = {
  id: WS,
  name: 'Items',
  fields: [
    { id: NO, name: 'No', alias: 'no', type: 'Text', required: true },
    { id: NAME, name: 'Name', alias: 'name', type: 'Text' },
  ],
};

const apiError = (category: ErrorCategory, errorCode?: number) =>
  new ApiError(`platform said no (${category})`, {
    method: 'PATCH',
    path: `/v3/app/worksheets/${WS}/rows`,
    category,
    ...(errorCode === undefined ? {} : { errorCode }),
  });

/**
 * writeBatch where the platform or the process fails in the ways write-batch.test.ts
 * does not walk: what lands, what is counted, what is dead-lettered with which message,
 * and what a later run still knows to retry. Failures the scripted platform cannot make
 * are injected at the client (`ctx.rows`).
 */
describe('writeBatch failures', () => {
  let redis: Redis;
  let platform: ScriptedPlatform;
  let client: PlatformClient;
  let run = 0;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeys(`${PREFIX}:*`);
    await redis.quit();
  });
  beforeEach(async () => {
    platform = await startScriptedPlatform(WS);
    client = createPlatformClient({
      baseUrl: platform.url,
      credentials: { kind: 'appkey', appKey: 'k', sign: 's' },
      retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 2 },
    });
  });
  afterEach(async () => {
    await client.close();
    await client.limiter.stop();
    await platform.close();
  });

  /** A run of job `items` (one key index per test: `job`), writing `batchSize` rows a request. */
  function context(mode: 'append' | 'upsert' | 'update', job: string, batchSize = 100): SyncContext {
    const spec = parseJobSpec(
      `name: ${job}\nsource: { type: csv, path: ./x.csv }\ntarget: { worksheet: ${WS}, mode: ${mode}${mode === 'append' ? '' : ', key: no'}, batchSize: ${batchSize} }\nfields: { no: no, name: name }\n`,
      `${job}.yaml`,
    );
    const key = mode === 'append' ? undefined : 'no';
    const plan = validateMapping(spec.mappings, structure, { mode, key });
    const deps = {
      client,
      redis,
      prefix: PREFIX,
      runs: createRunStore({ redis, prefix: PREFIX }),
      deadLetters: createDeadLetterStore({ redis, prefix: PREFIX }),
      log: createLogger({ level: 'silent' }),
    };
    return createSyncContext(spec, { structure, plan }, { runId: `run-${++run}`, attempt: 1 }, deps);
  }

  /** Rows as a worker reads them from a batch job. */
  function batch(ctx: SyncContext, names: string[]): RowToWrite[] {
    const rows = names.map((name, index): BatchRow => {
      const data = { no: `N-${index}`, name };
      const mapped = mapRecord(ctx.plan, data, { position: { index } });
      if (!mapped.ok) throw new Error(JSON.stringify(mapped.errors));
      return { index, source: { data, position: { index } }, mapped };
    });
    return throughJob(
      rows,
      ctx.plan.fields.map((f) => f.column),
    );
  }

  const names = () => [...platform.rows.values()].map((r) => r[NAME]).sort();
  const count = (request: string) => platform.requests.filter((r) => r === request).length;
  const CREATE = `POST /v3/app/worksheets/${WS}/rows/batch`;
  const BATCH_UPDATE = `PATCH /v3/app/worksheets/${WS}/rows/batch`;
  const deadLetters = async (ctx: SyncContext) => (await ctx.deadLetters.list({ runId: ctx.runId })).entries;

  it('a dead-lettered row keeps its key, so that the row landing later resolves it', async () => {
    platform.script.badValue = 'BAD';
    const ctx = context('upsert', 'keyed');
    await writeBatch(ctx, batch(ctx, ['a', 'BAD', 'c']));
    const [entry] = await deadLetters(ctx);
    expect(entry).toMatchObject({ key: 'N-1', category: 'invalid-row', errorCode: 10002 });
  });

  it('a batch create refused for a conflict (10006) is bisected like a bad row: the others land', async () => {
    const ctx = context('upsert', 'conflict');
    const conflicting: SyncContext = {
      ...ctx,
      rows: {
        ...ctx.rows,
        batchCreate: (worksheetId, input) =>
          input.rows.some((r) => r.fields.some((f) => f.value === 'DUP'))
            ? Promise.reject(apiError('conflict', 10006))
            : ctx.rows.batchCreate(worksheetId, input),
      },
    };
    const outcomes = await writeBatch(conflicting, batch(ctx, ['a', 'DUP', 'c', 'd']));
    expect([...outcomes.values()]).toEqual(['created', 'dead:conflict', 'created', 'created']);
    expect(names()).toEqual(['a', 'c', 'd']);
    const [entry] = await deadLetters(ctx);
    expect(entry).toMatchObject({ key: 'N-1', category: 'conflict', errorCode: 10006 });
  });

  it('update mode: a key in no worksheet row is skipped, nothing created', async () => {
    const ctx = context('update', 'update-only');
    const outcomes = await writeBatch(ctx, batch(ctx, ['new']));
    expect([...outcomes.values()]).toEqual(['skipped']);
    expect(platform.rows.size).toBe(0);
    expect(await ctx.runs.report(ctx.runId)).toMatchObject({ skipped: 1, created: 0 });
  });

  it('a row the reader refused keeps the key of its source record on its dead letter', async () => {
    const ctx = context('upsert', 'refused');
    await deadLetterRows(
      ctx,
      [{ index: 7, source: { data: { no: 'N-7', name: 'x' }, position: { index: 7 } } }],
      'invalid-row',
      { message: 'name: not a text', field: 'name' },
    );
    const [entry] = await deadLetters(ctx);
    expect(entry).toMatchObject({ key: 'N-7', field: 'name', message: 'name: not a text' });
  });

  it('a single update refused for a conflict is dead-lettered as a conflict', async () => {
    const first = context('upsert', 'conflict-update');
    await writeBatch(first, batch(first, ['a']));
    const second = context('upsert', 'conflict-update');
    const refusing: SyncContext = {
      ...second,
      rows: { ...second.rows, update: () => Promise.reject(apiError('conflict', 10006)) },
    };
    const outcomes = await writeBatch(refusing, batch(second, ['a2']));
    expect([...outcomes.values()]).toEqual(['dead:conflict']);
    expect((await deadLetters(second))[0]).toMatchObject({ category: 'conflict', errorCode: 10006 });
  });

  it('rows a dead worker left pending in a keyless append: the dead letter says to look in the worksheet before replaying', async () => {
    const ctx = context('append', 'pending-keyless');
    await ctx.runs.setOutcomes(ctx.runId, new Map([[0, 'pending']]));
    await writeBatch(ctx, batch(ctx, ['a']));
    const [entry] = await deadLetters(ctx);
    expect(entry?.message).toBe(
      'the worker stopped while this row was being created and the job has no key to check it: look for it in the worksheet before replaying',
    );
  });

  it('update mode: a matched row deleted meanwhile is dead-lettered saying so, and no row is created', async () => {
    const first = context('upsert', 'vanish');
    await writeBatch(first, batch(first, ['a']));
    platform.rows.clear();
    const update = context('update', 'vanish');
    const outcomes = await writeBatch(update, batch(update, ['a2']));
    expect([...outcomes.values()]).toEqual(['dead:not-found']);
    expect(platform.rows.size).toBe(0);
    const [entry] = await deadLetters(update);
    expect(entry?.message).toBe(
      'the matching worksheet row was deleted during the run (update mode creates no rows)',
    );
  });

  it('a keyless append whose create went unanswered says there is no key to check whether the rows landed', async () => {
    platform.script.dropAfterApply = 3;
    const ctx = context('append', 'keyless');
    await writeBatch(ctx, batch(ctx, ['a']));
    const [entry] = await deadLetters(ctx);
    expect(entry?.message).toMatch(
      /; the job has no key to check whether the rows landed: look for them before replaying$/,
    );
  });

  it('a row whose update failed is not marked current: the next run with the same data tries it again', async () => {
    const first = context('upsert', 'retry-later');
    await writeBatch(first, batch(first, ['a', 'b', 'c']));
    platform.script.badUpdateValue = 'same';
    const second = context('upsert', 'retry-later');
    await writeBatch(second, batch(second, ['same', 'same', 'same']));
    const third = context('upsert', 'retry-later');
    const outcomes = await writeBatch(third, batch(third, ['same', 'same', 'same']));
    expect([...outcomes.values()].sort()).toEqual(['dead:invalid-row', 'unchanged', 'unchanged']);
  });

  it('a row that already holds the values (its hash in the index stale) is unchanged: no write', async () => {
    const first = context('upsert', 'stale');
    await writeBatch(first, batch(first, ['a', 'b']));
    const entries = await first.index!.getMany(['N-0', 'N-1']);
    await first.index!.setMany(new Map([...entries].map(([k, e]) => [k, { ...e, hash: 'stale' }])));
    const before = platform.requests.filter((r) => r.startsWith('PATCH')).length;
    const second = context('upsert', 'stale');
    const outcomes = await writeBatch(second, batch(second, ['a', 'b']));
    expect([...outcomes.values()]).toEqual(['unchanged', 'unchanged']);
    expect(platform.requests.filter((r) => r.startsWith('PATCH')).length).toBe(before);
    expect(await second.runs.report(second.runId)).toMatchObject({ unchanged: 2, updated: 0 });
  });

  it('rows deleted meanwhile are created again in requests of batchSize rows, each once', async () => {
    const first = context('upsert', 'regrow', 2);
    await writeBatch(first, batch(first, ['a', 'b', 'c']));
    // Gone before the writer reads them back: found missing together, created again together.
    platform.rows.clear();
    const second = context('upsert', 'regrow', 2);
    const creates = count(CREATE);
    const outcomes = await writeBatch(second, batch(second, ['a2', 'b2', 'c2']));
    expect([...outcomes.values()]).toEqual(['created', 'created', 'created']);
    expect(names()).toEqual(['a2', 'b2', 'c2']);
    expect(count(CREATE) - creates).toBe(2);
  });

  it('one change set over more rows than batchSize goes out in requests of batchSize rows', async () => {
    const first = context('upsert', 'grouped', 2);
    await writeBatch(first, batch(first, ['a', 'b', 'c']));
    const second = context('upsert', 'grouped', 2);
    await writeBatch(second, batch(second, ['z', 'z', 'z']));
    expect(names()).toEqual(['z', 'z', 'z']);
    // Two rows in one batch PATCH, the third alone.
    expect(count(BATCH_UPDATE)).toBe(1);
    expect(
      platform.requests.filter((r) => r.startsWith(`PATCH /v3/app/worksheets/${WS}/rows/`)),
    ).toHaveLength(2);
  });

  it('a create never answered is reconciled three more times, then the batch fails with its rows pending', async () => {
    const ctx = context('upsert', 'silent');
    let calls = 0;
    const silent: SyncContext = {
      ...ctx,
      rows: {
        ...ctx.rows,
        batchCreate: () => {
          calls += 1;
          return Promise.reject(apiError('ambiguous'));
        },
      },
    };
    await expect(writeBatch(silent, batch(ctx, ['a', 'b']))).rejects.toThrow(/platform said no/);
    expect(calls).toBe(4);
    expect([...(await ctx.runs.getOutcomes(ctx.runId, [0, 1])).values()]).toEqual(['pending', 'pending']);
  });

  it('an update never answered is sent three more times, then the batch fails', async () => {
    const first = context('upsert', 'silent-update');
    await writeBatch(first, batch(first, ['a']));
    const second = context('upsert', 'silent-update');
    let calls = 0;
    const silent: SyncContext = {
      ...second,
      rows: {
        ...second.rows,
        update: () => {
          calls += 1;
          return Promise.reject(apiError('ambiguous'));
        },
      },
    };
    await expect(writeBatch(silent, batch(second, ['a2']))).rejects.toThrow(/platform said no/);
    expect(calls).toBe(4);
    expect(await deadLetters(second)).toEqual([]);
  });

  it('an update failing for a reason that is not the row’s (transient, worksheet gone) fails the batch: no dead letter, no new row', async () => {
    for (const [category, code] of [
      ['transient', 99999],
      ['not-found', 430013],
    ] as const) {
      const job = `not-the-row-${code}`;
      const first = context('upsert', job);
      await writeBatch(first, batch(first, ['a']));
      const second = context('upsert', job);
      const failing: SyncContext = {
        ...second,
        rows: { ...second.rows, update: () => Promise.reject(apiError(category, code)) },
      };
      const rowsBefore = platform.rows.size;
      await expect(writeBatch(failing, batch(second, ['a2']))).rejects.toThrow(/platform said no/);
      expect(platform.rows.size).toBe(rowsBefore);
      expect(await deadLetters(second)).toEqual([]);
    }
  });

  it('a batch update refused as a whole for a row reason (not found, conflict) falls back to one update per row; a transient refusal fails the batch', async () => {
    for (const category of ['not-found', 'conflict'] as const) {
      const job = `refused-${category}`;
      const first = context('upsert', job);
      await writeBatch(first, batch(first, ['a', 'b']));
      const second = context('upsert', job);
      const refusing: SyncContext = {
        ...second,
        rows: { ...second.rows, batchUpdate: () => Promise.reject(apiError(category)) },
      };
      const outcomes = await writeBatch(refusing, batch(second, ['y', 'y']));
      expect([...outcomes.values()]).toEqual(['updated', 'updated']);
    }
    const first = context('upsert', 'refused-transient');
    await writeBatch(first, batch(first, ['a', 'b']));
    const second = context('upsert', 'refused-transient');
    let singles = 0;
    const transient: SyncContext = {
      ...second,
      rows: {
        ...second.rows,
        batchUpdate: () => Promise.reject(apiError('transient', 99999)),
        update: (...args) => {
          singles += 1;
          return second.rows.update(...args);
        },
      },
    };
    await expect(writeBatch(transient, batch(second, ['x', 'x']))).rejects.toThrow(/platform said no/);
    expect(singles).toBe(0);
  });

  it('a create that fails in the process after the platform applied it leaves the rows pending: the retry finds them, creating none twice', async () => {
    const ctx = context('upsert', 'lost-answer');
    const rows = batch(ctx, ['a', 'b']);
    const lost: SyncContext = {
      ...ctx,
      rows: {
        ...ctx.rows,
        batchCreate: async (...args) => {
          await ctx.rows.batchCreate(...args);
          throw new TypeError('answer could not be parsed');
        },
      },
    };
    await expect(writeBatch(lost, rows)).rejects.toThrow(TypeError);
    expect([...(await ctx.runs.getOutcomes(ctx.runId, [0, 1])).values()]).toEqual(['pending', 'pending']);
    expect([...(await writeBatch(ctx, rows)).values()]).toEqual(['created', 'created']);
    expect(names()).toEqual(['a', 'b']);
    expect(count(CREATE)).toBe(1);
  });

  it('a create answered with too few row ids stops the run naming the counts; the rows stay pending for the retry', async () => {
    const ctx = context('upsert', 'short');
    const rows = batch(ctx, ['a', 'b', 'c']);
    const short: SyncContext = {
      ...ctx,
      rows: {
        ...ctx.rows,
        batchCreate: async (...args) => {
          const answer = await ctx.rows.batchCreate(...args);
          return { ...answer, rowIds: answer.rowIds.slice(1) };
        },
      },
    };
    await expect(writeBatch(short, rows)).rejects.toMatchObject({
      name: 'RunStoppedError',
      category: 'unknown',
      message: 'batch create answered 2 row ids for 3 rows',
    });
    expect([...(await ctx.runs.getOutcomes(ctx.runId, [0, 1, 2])).values()]).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
    expect([...(await writeBatch(ctx, rows)).values()]).toEqual(['created', 'created', 'created']);
    expect(names()).toEqual(['a', 'b', 'c']);
  });
});
