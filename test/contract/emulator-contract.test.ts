import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

/**
 * The emulator, in its default dialect, answers each operation of
 * shared/spec/platform-examples/ in the fixture's shape: the keys, nesting, JSON types and
 * value formats of the fixture's `answer` (not its sample values). Every fixture file is
 * picked up; one whose operation has no request here fails, naming what to add. Known
 * gaps run as expected failures, so closing one makes the test say to move it.
 */
const EXAMPLES = path.resolve(import.meta.dirname, '../../../shared/spec/platform-examples');

interface Fixture {
  method: string;
  path: string;
  request: { query?: Record<string, unknown>; body?: unknown };
  answer: unknown;
}

/** Format classes of strings that the fixtures pin (ids, timestamps). */
function formatOf(value: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return 'uuid';
  if (/^[0-9a-f]{24}$/i.test(value)) return 'hex24';
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return 'wall-clock';
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) return 'iso';
  return 'text';
}

/**
 * The first difference between the fixture's shape and the emulator's answer, or
 * undefined. Inside rows only the row id and system keys are compared (the rest are the
 * fixture worksheet's own field aliases).
 */
function shapeDiff(expected: unknown, actual: unknown, at: string, inRow = false): string | undefined {
  if (expected === null || expected === undefined) return undefined;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual))
      return `${at}: expected an array, got ${JSON.stringify(actual)?.slice(0, 60)}`;
    if (expected.length === 0 || actual.length === 0) return undefined;
    return shapeDiff(expected[0], actual[0], `${at}[0]`, at.endsWith('.rows'));
  }
  if (typeof expected === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
      return `${at}: expected an object`;
    // Maps keyed by the request's own field ids (pivot cells, summary): data, not shape.
    if (/\.(pivot\[0\]\.(rows|columns|values)|summary)$/.test(at)) return undefined;
    for (const [key, value] of Object.entries(expected as Record<string, unknown>)) {
      if (inRow && key !== 'id' && !key.startsWith('_')) continue;
      if (!(key in actual)) return `${at}.${key}: missing (has ${Object.keys(actual).join(', ')})`;
      const diff = shapeDiff(value, (actual as Record<string, unknown>)[key], `${at}.${key}`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (typeof expected !== typeof actual)
    return `${at}: expected a ${typeof expected}, got ${JSON.stringify(actual)}`;
  if (
    typeof expected === 'string' &&
    formatOf(expected) !== formatOf(actual as string) &&
    formatOf(expected) !== 'text'
  ) {
    return `${at}: expected the ${formatOf(expected)} form, got ${JSON.stringify(actual)}`;
  }
  return undefined;
}

/** Operations whose emulator answer does not match yet, with why: each runs as an expected failure. */
const KNOWN_GAPS: Record<string, string> = {};

describe("the emulator answers in the platform's shapes", () => {
  let emulator: EmulatorHandle;
  let headers: Record<string, string>;
  let ws: string;
  let rowId: string;
  let other: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    const app = emulator.createApp({ name: 'Field Projects' });
    headers = { 'HAP-Appkey': app.appKey, 'HAP-Sign': app.sign, 'content-type': 'application/json' };
    const customers = emulator.createWorksheet(app.appId, {
      name: 'Customers',
      alias: 'customers',
      fields: [{ name: 'Company', alias: 'company_name', type: 'Text', isTitle: true }],
    }).id;
    ws = emulator.createWorksheet(app.appId, {
      name: 'Projects',
      alias: 'projects',
      fields: [
        { name: 'Project', alias: 'project_name', type: 'Text', isTitle: true },
        { name: 'Budget', alias: 'budget', type: 'Number' },
        { name: 'Status', alias: 'status', type: 'SingleSelect', options: [{ value: 'Open', index: 1 }] },
        { name: 'Customer', alias: 'customer', type: 'Relation', dataSource: customers },
      ],
    }).id;
    const customer = (await call('POST', `/v3/app/worksheets/${customers}/rows`, {
      fields: [{ id: 'company_name', value: 'Northwind' }],
    })) as {
      data: { id: string };
    };
    const created = (await call('POST', `/v3/app/worksheets/${ws}/rows/batch`, {
      rows: [
        {
          fields: [
            { id: 'project_name', value: 'A' },
            { id: 'customer', value: [customer.data.id] },
          ],
        },
        { fields: [{ id: 'project_name', value: 'B' }] },
      ],
    })) as { data: { rowIds: string[] } };
    [rowId, other] = created.data.rowIds as [string, string];
  });
  afterAll(async () => {
    await emulator.close();
  });

  async function call(
    method: string,
    p: string,
    body?: unknown,
    query: Record<string, unknown> = {},
  ): Promise<unknown> {
    const url = new URL(`${emulator.url}${p}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    const res = await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return res.json();
  }

  /** The request of each operation, built on the seeded worksheet the way the fixture's request is. */
  const senders: Record<string, (f: Fixture) => Promise<unknown>> = {
    'GET /v3/app': () => call('GET', '/v3/app'),
    'POST /v3/app/worksheets/list': (f) => call('POST', '/v3/app/worksheets/list', f.request.body),
    'GET /v3/app/worksheets/{worksheet_id}': (f) =>
      call('GET', `/v3/app/worksheets/${ws}`, undefined, f.request.query),
    'POST /v3/app/worksheets/{worksheet_id}/rows/list': () =>
      call('POST', `/v3/app/worksheets/${ws}/rows/list`, {
        pageSize: 100,
        pageIndex: 1,
        includeTotalCount: true,
        includeSystemFields: true,
      }),
    'GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}': (f) =>
      call('GET', `/v3/app/worksheets/${ws}/rows/${rowId}`, undefined, f.request.query),
    'POST /v3/app/worksheets/{worksheet_id}/rows': () =>
      call('POST', `/v3/app/worksheets/${ws}/rows`, { fields: [{ id: 'project_name', value: 'C' }] }),
    'PATCH /v3/app/worksheets/{worksheet_id}/rows/{row_id}': () =>
      call('PATCH', `/v3/app/worksheets/${ws}/rows/${rowId}`, {
        fields: [{ id: 'budget', value: 131000 }],
        triggerWorkflow: false,
      }),
    'DELETE /v3/app/worksheets/{worksheet_id}/rows/{row_id}': (f) =>
      call('DELETE', `/v3/app/worksheets/${ws}/rows/${other}`, f.request.body),
    'POST /v3/app/worksheets/{worksheet_id}/rows/batch': () =>
      call('POST', `/v3/app/worksheets/${ws}/rows/batch`, {
        rows: [{ fields: [{ id: 'project_name', value: 'D' }] }],
        triggerWorkflow: false,
      }),
    'PATCH /v3/app/worksheets/{worksheet_id}/rows/batch': () =>
      call('PATCH', `/v3/app/worksheets/${ws}/rows/batch`, {
        rowIds: [rowId],
        fields: [{ id: 'budget', value: 1 }],
        triggerWorkflow: false,
      }),
    'DELETE /v3/app/worksheets/{worksheet_id}/rows/batch': () =>
      call('DELETE', `/v3/app/worksheets/${ws}/rows/batch`, {
        rowIds: ['00000000-0000-4000-8000-000000000000'],
        permanent: false,
      }),
    'GET /v3/users/lookup': () =>
      call('GET', '/v3/users/lookup', undefined, { name: emulator.state.users()[0]!.fullname }),
    'GET /v3/departments/lookup': () =>
      call('GET', '/v3/departments/lookup', undefined, { name: 'nobody in particular' }),
    'GET /v3/regions': (f) => call('GET', '/v3/regions', undefined, f.request.query),
    'GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}/relations/{field}': (f) =>
      call('GET', `/v3/app/worksheets/${ws}/rows/${rowId}/relations/customer`, undefined, f.request.query),
    'POST /v3/app/worksheets/{worksheet_id}/rows/pivot': () =>
      call('POST', `/v3/app/worksheets/${ws}/rows/pivot`, {
        rows: [{ field: 'status', displayName: 'Status' }],
        columns: [],
        values: [{ field: 'record_count', displayName: 'Rows', aggregation: 'COUNT' }],
        includeSummary: true,
      }),
  };

  for (const file of readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const fixture = JSON.parse(readFileSync(path.join(EXAMPLES, file), 'utf8')) as Fixture;
    const operation = `${fixture.method} ${fixture.path}`;
    const gap = KNOWN_GAPS[operation];
    const test = gap === undefined ? it : it.fails;
    test(`${file}: ${operation}${gap === undefined ? '' : ` (known gap: ${gap})`}`, async () => {
      const send = senders[operation];
      if (send === undefined)
        throw new Error(
          `${file}: no request for ${operation} in test/contract/emulator-contract.test.ts: add one to senders`,
        );
      const answer = (await send(fixture)) as { data?: unknown };
      // A single row's `data` is a row: only its id and system keys are the platform's.
      const oneRow = fixture.method === 'GET' && fixture.path.endsWith('/rows/{row_id}');
      const expected = fixture.answer as { data?: unknown };
      const diff = oneRow
        ? shapeDiff(expected.data, answer.data, 'answer.data', true)
        : shapeDiff(expected, answer, 'answer');
      expect(diff).toBeUndefined();
    });
  }
});
