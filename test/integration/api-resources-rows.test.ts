import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { ApiError, ConfigError } from '../../src/ground/errors.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { ListRowsBody } from '../../src/api/types.ts';
import { envelope, startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';

/**
 * What the resource methods check or add before a request leaves: row-list paging,
 * explicit triggerWorkflow, non-empty ids and batches, abort signals; and what a caller
 * gets back (data, platform errors, live stats).
 */

const fields = [{ id: 'title', value: 'Hello' }];

let server: RecordingServer;
let client: PlatformClient;
let limiter: RateLimiter;

beforeAll(async () => {
  server = await startRecordingServer();
  limiter = createRateLimiter({
    budgetKey: 'test:api-resources-rows',
    initialRatePerSec: 1000,
    maxRatePerSec: 1000,
    burstMs: 1000,
  });
  client = createPlatformClient({
    baseUrl: server.url,
    credentials: { kind: 'appkey', appKey: 'key-1', sign: 'sign-secret' },
    retry: { retries: 0, unknownRetries: 0 },
    limiter,
  });
});
afterAll(async () => {
  await client.close();
  await limiter.stop();
  await server.close();
});
beforeEach(() => {
  server.reset();
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(error instanceof Error)) throw new Error(`expected a rejection with an Error, got ${String(error)}`);
  return error;
}

describe('rows.list paging checks', () => {
  const bad: Array<[string, Partial<ListRowsBody>, RegExp]> = [
    ['pageSize 0', { pageSize: 0, pageIndex: 1 }, /pageSize must be a whole number from 1 to 1000, got 0/],
    [
      'pageSize 1001',
      { pageSize: 1001, pageIndex: 1 },
      /pageSize must be a whole number from 1 to 1000, got 1001/,
    ],
    ['pageSize 2.5', { pageSize: 2.5, pageIndex: 1 }, /pageSize .* got 2\.5/],
    ['pageSize NaN', { pageSize: Number.NaN, pageIndex: 1 }, /pageSize .* got NaN/],
    ['pageSize missing', { pageIndex: 1 }, /pageSize .* got undefined/],
    [
      'pageIndex 0',
      { pageSize: 10, pageIndex: 0 },
      /pageIndex must be a whole number of at least 1 \(pages start at 1\), got 0/,
    ],
    ['pageIndex -3', { pageSize: 10, pageIndex: -3 }, /pageIndex .* got -3/],
    ['pageIndex 1.5', { pageSize: 10, pageIndex: 1.5 }, /pageIndex .* got 1\.5/],
  ];

  it.each(bad)('refuses %s before any request, naming the worksheet', async (_name, body, message) => {
    const error = await rejection(client.rows.list('ws-orders', body as ListRowsBody));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(message);
    expect(error.message).toContain('rows.list (worksheet ws-orders)');
    expect(server.requests).toHaveLength(0);
  });

  it('sends the limits themselves: pageSize 1 and 1000, pageIndex 1', async () => {
    server.respondWithData({ rows: [] });
    await client.rows.list('ws-orders', { pageSize: 1000, pageIndex: 1 });
    await client.rows.list('ws-orders', { pageSize: 1, pageIndex: 1 });
    expect(server.requests.map((r) => r.body)).toEqual([
      { pageSize: 1000, pageIndex: 1, useFieldIdAsKey: true },
      { pageSize: 1, pageIndex: 1, useFieldIdAsKey: true },
    ]);
  });

  it('asks for rows keyed by field id unless the caller says otherwise', async () => {
    server.respondWithData({ rows: [] });
    await client.rows.list('ws-orders', { pageSize: 10, pageIndex: 1, useFieldIdAsKey: false });
    expect(server.requests.map((r) => r.body)).toEqual([
      { pageSize: 10, pageIndex: 1, useFieldIdAsKey: false },
    ]);
  });

  it('returns the rows as the server sent them, and total (only {rows, total} is read)', async () => {
    const data = { rows: [{ rowid: 'r1', title: 'A' }], total: 1, pageIndex: 1, pageSize: 10 };
    server.respondWithData(data);
    expect(
      await client.rows.list('ws-orders', { pageSize: 10, pageIndex: 1, includeTotalCount: true }),
    ).toEqual({ rows: data.rows, total: 1 });
  });
});

describe('triggerWorkflow is always sent', () => {
  const sentFlag = () => (server.last().body as { triggerWorkflow?: unknown }).triggerWorkflow;
  beforeEach(() => {
    server.respond((req) => {
      const rowIds = (req.body as { rowIds?: unknown } | undefined)?.rowIds;
      if (req.method === 'POST' && req.path.endsWith('/batch'))
        return { body: envelope({ rowIds: ['r-new'] }) };
      if (req.method === 'PATCH' && req.path.endsWith('/batch'))
        return { body: envelope({ successfulRowIds: rowIds, failedRowIds: [] }) };
      return { body: envelope({}) };
    });
  });

  it('batch writes send false unless the caller asks for workflows', async () => {
    await client.rows.batchCreate('ws', { rows: [{ fields }] });
    expect(sentFlag()).toBe(false);
    await client.rows.batchUpdate('ws', { rowIds: ['r1'], fields });
    expect(sentFlag()).toBe(false);
    await client.rows.batchDelete('ws', { rowIds: ['r1'] });
    expect(sentFlag()).toBe(false);

    await client.rows.batchCreate('ws', { rows: [{ fields }], triggerWorkflow: true });
    expect(sentFlag()).toBe(true);
    await client.rows.batchUpdate('ws', { rowIds: ['r1'], fields, triggerWorkflow: true });
    expect(sentFlag()).toBe(true);
    await client.rows.batchDelete('ws', { rowIds: ['r1'], triggerWorkflow: true });
    expect(sentFlag()).toBe(true);
  });

  it('single-row writes send true (the platform default) unless the caller says false', async () => {
    await client.rows.create('ws', { fields });
    expect(sentFlag()).toBe(true);
    await client.rows.update('ws', 'r1', { fields });
    expect(sentFlag()).toBe(true);
    await client.rows.delete('ws', 'r1');
    expect(sentFlag()).toBe(true);

    await client.rows.create('ws', { fields, triggerWorkflow: false });
    expect(sentFlag()).toBe(false);
    await client.rows.update('ws', 'r1', { fields, triggerWorkflow: false });
    expect(sentFlag()).toBe(false);
    await client.rows.delete('ws', 'r1', { triggerWorkflow: false });
    expect(sentFlag()).toBe(false);
  });
});

describe('arguments refused before a request', () => {
  it.each([
    ['rows.get', 'rowId', () => client.rows.get('ws', '')],
    ['rows.update', 'worksheetId', () => client.rows.update('   ', 'r1', { fields })],
    ['rows.relations', 'field', () => client.rows.relations('ws', 'r1', '')],
    ['worksheets.delete', 'worksheetId', () => client.worksheets.delete('')],
    ['workflows.deleteNode', 'nodeId', () => client.workflows.deleteNode('wf', '')],
    ['roles.get', 'roleId', () => client.roles.get(undefined as unknown as string)],
    ['todos.return', 'instanceId', () => client.todos.return('')],
    ['optionsets.update', 'optionsetId', () => client.optionsets.update('', {})],
  ])('%s with an empty %s rejects (never throws) and names both', async (method, param, invoke) => {
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = invoke();
    }).not.toThrow();
    const error = await rejection(promise!);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`${method}: ${param} must be a non-empty string id`);
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ['rows.batchCreate', 'rows must not be empty', () => client.rows.batchCreate('ws', { rows: [] })],
    [
      'rows.batchUpdate',
      'rowIds must not be empty',
      () => client.rows.batchUpdate('ws', { rowIds: [], fields }),
    ],
    ['rows.batchDelete', 'rowIds must not be empty', () => client.rows.batchDelete('ws', { rowIds: [] })],
    [
      'rows.create',
      'fields must be an array, got object',
      () => client.rows.create('ws', { fields: { title: 'x' } as never }),
    ],
  ])('%s: %s', async (method, message, invoke) => {
    const error = await rejection(invoke());
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(`${method}: ${message}`);
    expect(server.requests).toHaveLength(0);
  });
});

describe('calls', () => {
  it('an aborted signal stops the call before anything is sent', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(client.rows.get('ws', 'r1', {}, { signal: controller.signal }));
    expect(error.name).toBe('AbortError');
    expect(server.requests).toHaveLength(0);
  });

  it('a platform error arrives as an ApiError with the code and the encoded path', async () => {
    server.respond(() => ({
      body: { success: false, error_code: 430022, error_msg: 'worksheet does not exist' },
    }));
    const error = await rejection(client.worksheets.get('gone/1'));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).errorCode).toBe(430022);
    expect((error as ApiError).category).toBe('not-found');
    expect((error as ApiError).path).toBe('/v3/app/worksheets/gone%2F1');
    expect(error.message).not.toContain('sign-secret');
  });

  it('stats are the live counters of the core client', async () => {
    const before = client.stats.requests;
    server.respond(() => ({ body: envelope({ id: 'new-row' }) }));
    expect(await client.rows.create('ws', { fields })).toEqual({ id: 'new-row' });
    expect(client.stats.requests).toBe(before + 1);
  });
});
