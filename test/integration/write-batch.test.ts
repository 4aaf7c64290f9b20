import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createSyncContext } from '../../src/sync/write/create-sync-context.ts';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { mapRecord } from '../../src/sync/mapping/map-record.ts';
import { validateMapping } from '../../src/sync/mapping/validate-mapping.ts';
import { createDeadLetterStore } from '../../src/sync/state/dead-letter-store.ts';
import { createRunStore } from '../../src/sync/state/run-store.ts';
import type { SyncContext } from '../../src/sync/write/sync-context.ts';
import { writeBatch } from '../../src/sync/write/write-batch.ts';
import type { BatchRow, RowToWrite } from '../../src/sync/batch/batch-row.ts';
import { throughJob } from '../helpers/batch-rows.ts';
import { startScriptedPlatform } from '../helpers/scripted-platform.ts';
import type { ScriptedPlatform } from '../helpers/scripted-platform.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const PREFIX = `rbtest-writebatch-${process.pid}`;
const WS = '66b2a41c9e07d35f18c4b301';
const structure: WorksheetStructure = {
  id: WS,
  name: 'Items',
  fields: [
    { id: '66b2a41c9e07d35f18c4d501', name: 'No', alias: 'no', type: 'Text', required: true },
    { id: '66b2a41c9e07d35f18c4d502', name: 'Name', alias: 'name', type: 'Text' },
  ],
};

/**
 * writeBatch, the exactly-once core, against a scripted platform and real Redis: each
 * test walks one path where a row could be lost, written twice or blamed wrongly.
 */
describe('writeBatch', () => {
  let redis: Redis;
  let platform: ScriptedPlatform;
  let client: PlatformClient;
  let run = 0;
  // Each test its own state (key index, outcomes, dead letters): a fresh prefix.
  let prefix = PREFIX;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeys(`${PREFIX}:*`);
    await redis.quit();
  });
  beforeEach(async () => {
    prefix = `${PREFIX}:${run}`;
    platform = await startScriptedPlatform(WS);
    client = createPlatformClient({
      baseUrl: platform.url,
      credentials: { kind: 'appkey', appKey: 'k', sign: 's' },
      retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    });
  });
  afterEach(async () => {
    await client.close();
    await client.limiter.stop();
    await platform.close();
  });

  function context(mode: 'append' | 'upsert' | 'update', runId = `run-${++run}`): SyncContext {
    const spec = parseJobSpec(
      `name: items\nsource: { type: csv, path: ./x.csv }\ntarget: { worksheet: ${WS}, mode: ${mode}${mode === 'append' ? '' : ', key: no'}, batchSize: 100 }\nfields: { no: no, name: name }\n`,
      'items.yaml',
    );
    const plan = validateMapping(spec.mappings, structure, {
      mode,
      key: mode === 'append' ? undefined : 'no',
    });
    const deps = {
      client,
      redis,
      prefix,
      runs: createRunStore({ redis, prefix }),
      deadLetters: createDeadLetterStore({ redis, prefix }),
      log: createLogger({ level: 'silent' }),
    };
    return createSyncContext(spec, { structure, plan }, { runId, attempt: 1 }, deps);
  }

  /** Rows as a worker reads them from a batch job. */
  function batch(ctx: SyncContext, names: string[], from = 0): RowToWrite[] {
    const rows = names.map((name, i): BatchRow => {
      const index = from + i;
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

  // Rows are written with field ids (the plan's FieldValue ids).
  const NAME = structure.fields[1]!.id;
  const NO = structure.fields[0]!.id;
  const names = () => [...platform.rows.values()].map((r) => r[NAME]).sort();

  it('isolates a row the server rejects by bisecting to that one row: the seven good rows land', async () => {
    platform.script.badValue = 'BAD';
    const ctx = context('append');
    const rows = batch(ctx, ['a', 'b', 'c', 'd', 'BAD', 'f', 'g', 'h']);
    const outcomes = await writeBatch(ctx, rows);
    expect(names()).toEqual(['a', 'b', 'c', 'd', 'f', 'g', 'h']);
    expect([...outcomes.values()].filter((o) => o === 'created')).toHaveLength(7);
    expect(outcomes.get(4)).toBe('dead:invalid-row');
    const { entries } = await ctx.deadLetters.list({ runId: ctx.runId });
    expect(entries.map((e) => [e.source.data.name, e.errorCode])).toEqual([['BAD', 10002]]);
  });

  it('a create answered but not recorded (Redis went away) stays pending: the retry finds the rows by key, creating none twice', async () => {
    const ctx = context('upsert');
    const rows = batch(ctx, ['a', 'b', 'c']);
    // Redis fails once, right after the create was answered: recording 'created' throws.
    const runs = ctx.runs;
    let failNext = false;
    const flaky: SyncContext = {
      ...ctx,
      rows: {
        ...ctx.rows,
        batchCreate: async (...args: Parameters<typeof ctx.rows.batchCreate>) => {
          const answer = await ctx.rows.batchCreate(...args);
          failNext = true;
          return answer;
        },
      },
      runs: {
        ...runs,
        setOutcomes: async (runId, outcomes) => {
          if (failNext) {
            failNext = false;
            throw Object.assign(new Error('Reached the max retries per request limit (which is 3).'), {
              name: 'MaxRetriesPerRequestError',
            });
          }
          return runs.setOutcomes(runId, outcomes);
        },
      },
    };
    await expect(writeBatch(flaky, rows)).rejects.toThrow(/max retries/);
    expect([...(await runs.getOutcomes(ctx.runId, [0, 1, 2])).values()]).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
    const outcomes = await writeBatch(ctx, rows);
    expect([...outcomes.values()]).toEqual(['created', 'created', 'created']);
    expect(names()).toEqual(['a', 'b', 'c']);
  });

  it('a batch create answering the wrong number of ids: the rows are reconciled by key (at once or on the retry), none written twice', async () => {
    platform.script.shortAnswers = 1;
    const ctx = context('upsert');
    const rows = batch(ctx, ['a', 'b', 'c']);
    // The writer may stop the batch (rows left pending) or treat the answer as ambiguous
    // and reconcile at once; either way the batch's retry must not create them again.
    const outcomes = await writeBatch(ctx, rows).catch(async (err: unknown) => {
      expect(String(err)).toMatch(/2 row ids for 3 rows|answered 2/);
      expect([...(await ctx.runs.getOutcomes(ctx.runId, [0, 1, 2])).values()]).toEqual([
        'pending',
        'pending',
        'pending',
      ]);
      return writeBatch(ctx, rows);
    });
    expect([...outcomes.values()]).toEqual(['created', 'created', 'created']);
    expect(platform.requests.filter((r) => r === `POST /v3/app/worksheets/${WS}/rows/batch`)).toHaveLength(1);
    expect(names()).toEqual(['a', 'b', 'c']);
  });

  it('reconciles pending creates by key: rows that landed are found, the one that did not is created once', async () => {
    const ctx = context('upsert');
    const rows = batch(ctx, ['a', 'b', 'c']);
    // A worker died mid-create: rows 0 and 1 landed, row 2 did not; all three are pending.
    platform.rows.set('row-a', { [NO]: 'N-0', [NAME]: 'a' });
    platform.rows.set('row-b', { [NO]: 'N-1', [NAME]: 'b' });
    await ctx.runs.setOutcomes(
      ctx.runId,
      new Map([
        [0, 'pending'],
        [1, 'pending'],
        [2, 'pending'],
      ]),
    );
    const outcomes = await writeBatch(ctx, rows);
    expect([...outcomes.values()]).toEqual(['created', 'created', 'created']);
    expect(names()).toEqual(['a', 'b', 'c']);
    const index = await ctx.index!.getMany(['N-0', 'N-1', 'N-2']);
    expect(index.get('N-0')?.rowId).toBe('row-a');
    expect(index.get('N-1')?.rowId).toBe('row-b');
  });

  it('ambiguous rounds: a create applied but never answered is reconciled by key, not sent twice', async () => {
    platform.script.dropAfterApply = 1;
    const ctx = context('upsert');
    const outcomes = await writeBatch(ctx, batch(ctx, ['a', 'b', 'c', 'd']));
    expect([...outcomes.values()]).toEqual(['created', 'created', 'created', 'created']);
    expect(names()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a keyless append whose create went unanswered is dead-lettered as ambiguous, never guessed', async () => {
    platform.script.dropAfterApply = 3;
    const ctx = context('append');
    const outcomes = await writeBatch(ctx, batch(ctx, ['a', 'b']));
    expect([...outcomes.values()]).toEqual(['dead:ambiguous', 'dead:ambiguous']);
    // Applied once by the server (the ambiguous write itself), never re-sent.
    expect(platform.requests.filter((r) => r === `POST /v3/app/worksheets/${WS}/rows/batch`)).toHaveLength(1);
  });

  it('10007 mid-run: a matched row deleted meanwhile is created again by upsert, dead-lettered by update', async () => {
    const first = context('upsert');
    await writeBatch(first, batch(first, ['a', 'b']));
    const [idA] = [...platform.rows.keys()];
    platform.rows.delete(idA!);
    const upsert = context('upsert');
    const outcomes = await writeBatch(upsert, batch(upsert, ['a2', 'b2']));
    expect([...outcomes.values()].sort()).toEqual(['created', 'updated']);
    expect(names()).toEqual(['a2', 'b2']);

    const [idB] = [...platform.rows.keys()];
    platform.rows.delete(idB!);
    const update = context('update');
    const result = await writeBatch(update, batch(update, ['a3', 'b3']));
    expect([...result.values()].sort()).toEqual(['dead:not-found', 'updated']);
    const { entries } = await update.deadLetters.list({ runId: update.runId });
    expect(entries[0]?.errorCode).toBe(10007);
  });

  it('a retried batch writes nothing again and counts each row once', async () => {
    const ctx = context('upsert');
    const rows = batch(ctx, ['a', 'b', 'c']);
    await writeBatch(ctx, rows);
    const requests = platform.requests.length;
    const again = await writeBatch(ctx, rows);
    expect([...again.values()]).toEqual(['created', 'created', 'created']);
    expect(platform.requests.length).toBe(requests);
    expect(await ctx.runs.report(ctx.runId)).toMatchObject({ created: 3, updated: 0, unchanged: 0 });
  });

  it('an unchanged re-run (a new run, same rows) is settled by the content hash with no request at all', async () => {
    const first = context('upsert');
    await writeBatch(first, batch(first, ['a', 'b', 'c']));
    const requests = platform.requests.length;
    const second = context('upsert');
    const outcomes = await writeBatch(second, batch(second, ['a', 'b', 'c']));
    expect([...outcomes.values()]).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(platform.requests.length).toBe(requests);
  });

  it('a row deleted between the read and its update (10007) is created again by upsert', async () => {
    const first = context('upsert');
    await writeBatch(first, batch(first, ['a', 'b']));
    const ids = [...platform.rows.keys()];
    platform.script.vanishOnUpdate = new Set([ids[0]!]);
    const second = context('upsert');
    const outcomes = await writeBatch(second, batch(second, ['a2', 'b2']));
    expect([...outcomes.values()].sort()).toEqual(['created', 'updated']);
    expect(names()).toEqual(['a2', 'b2']);
  });

  it('one row of a batch update failing is retried alone and dead-lettered with its own code; the others are updated', async () => {
    const first = context('upsert');
    await writeBatch(first, batch(first, ['a', 'b', 'c']));
    platform.script.badUpdateValue = 'same';
    const second = context('upsert');
    const outcomes = await writeBatch(second, batch(second, ['same', 'same', 'same']));
    expect(platform.requests.filter((r) => r === `PATCH /v3/app/worksheets/${WS}/rows/batch`)).toHaveLength(
      1,
    );
    expect([...outcomes.values()].sort()).toEqual(['dead:invalid-row', 'updated', 'updated']);
    const { entries } = await second.deadLetters.list({ runId: second.runId });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ errorCode: 10002, category: 'invalid-row' });
    // The dead letter carries what would have been written, for a replay after a fix.
    expect(entries[0]?.payload).toEqual(expect.arrayContaining([{ id: NAME, value: 'same' }]));
  });

  it('an update applied but never answered is simply sent again (updates are idempotent)', async () => {
    const first = context('upsert');
    await writeBatch(first, batch(first, ['a']));
    platform.script.dropUpdateAfterApply = 1;
    const second = context('upsert');
    const outcomes = await writeBatch(second, batch(second, ['a2']));
    expect([...outcomes.values()]).toEqual(['updated']);
    expect(platform.requests.filter((r) => r.startsWith('PATCH'))).toHaveLength(2);
    expect(names()).toEqual(['a2']);
  });

  it('rows left pending by a dead worker in a keyless append are dead-lettered as ambiguous, not created again', async () => {
    const ctx = context('append');
    await ctx.runs.setOutcomes(
      ctx.runId,
      new Map([
        [0, 'pending'],
        [1, 'pending'],
      ]),
    );
    const outcomes = await writeBatch(ctx, batch(ctx, ['a', 'b', 'c']));
    expect([...outcomes.entries()].sort()).toEqual([
      [0, 'dead:ambiguous'],
      [1, 'dead:ambiguous'],
      [2, 'created'],
    ]);
    expect(names()).toEqual(['c']);
    const { entries } = await ctx.deadLetters.list({ runId: ctx.runId });
    expect(entries.map((e) => e.message)).toEqual([
      expect.stringMatching(/no key to check it/),
      expect.stringMatching(/no key to check it/),
    ]);
  });

  it('a create the server refused transiently leaves no row pending: the retry creates without a lookup', async () => {
    platform.script.failCreates = 10;
    const ctx = context('upsert');
    const rows = batch(ctx, ['a', 'b']);
    await expect(writeBatch(ctx, rows)).rejects.toThrow(/99999|data operation/);
    expect((await ctx.runs.getOutcomes(ctx.runId, [0, 1])).size).toBe(0);
    platform.script.failCreates = 0;
    const lists = platform.requests.filter((r) => r.endsWith('/rows/list')).length;
    expect([...(await writeBatch(ctx, rows)).values()]).toEqual(['created', 'created']);
    expect(platform.requests.filter((r) => r.endsWith('/rows/list')).length).toBe(lists);
    expect(names()).toEqual(['a', 'b']);
  });

  it('a batch job larger than one platform batch: creates and one shared change set go out in requests of batchSize rows', async () => {
    const first = context('upsert');
    const count = 250;
    const created = await writeBatch(
      first,
      batch(
        first,
        Array.from({ length: count }, (_, i) => `v${i}`),
      ),
    );
    expect([...created.values()].filter((o) => o === 'created')).toHaveLength(count);
    expect(platform.requests.filter((r) => r === `POST /v3/app/worksheets/${WS}/rows/batch`)).toHaveLength(3);
    const second = context('upsert');
    const outcomes = await writeBatch(
      second,
      batch(
        second,
        Array.from({ length: count }, () => 'same'),
      ),
    );
    expect([...outcomes.values()].filter((o) => o === 'updated')).toHaveLength(count);
    // 250 rows, one change set, batchSize 100: three batch updates (one request without the split).
    expect(platform.requests.filter((r) => r === `PATCH /v3/app/worksheets/${WS}/rows/batch`)).toHaveLength(
      3,
    );
    expect(platform.requests.filter((r) => r.startsWith('PATCH') && !r.endsWith('/rows/batch'))).toHaveLength(
      0,
    );
    expect(new Set(names())).toEqual(new Set(['same']));
    expect(platform.rows.size).toBe(count);
  });

  it('a batch update refused as a whole falls back to one update per row, each with its own outcome', async () => {
    const first = context('upsert');
    await writeBatch(first, batch(first, ['a', 'b']));
    platform.script.refuseBatchUpdateValue = 'z';
    const second = context('upsert');
    const outcomes = await writeBatch(second, batch(second, ['z', 'z']));
    expect([...outcomes.values()]).toEqual(['updated', 'updated']);
    expect(platform.requests.filter((r) => r.startsWith('PATCH'))).toHaveLength(3);
    expect(names()).toEqual(['z', 'z']);
  });
});
