/**
 * The client against the platform's own answers: every file of platform-examples/ (read
 * at test time, so a fixture added later is picked up), its `answer` and every variant,
 * served by a real HTTP server for the fixture's method and path and read through the
 * real client stack (transport, auth, envelope, parsers, row normaliser). Last round the
 * emulator and the client shared one misreading of the structure's id; these answers
 * come from the platform's export instead. An operation missing from OPERATIONS fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BatchCountMismatchError } from '../../src/api/answers/answer-shape-error.ts';
import { listAppWorksheets } from '../../src/api/answers/list-app-worksheets.ts';
import type { PivotBody } from '../../src/api/answers/parse-pivot.ts';
import { parseWorksheetStructure } from '../../src/api/answers/parse-worksheet-structure.ts';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { ApiError, categoryOfCode, classifyError } from '../../src/ground/errors.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { LookupQuery } from '../../src/api/resources/lookups.ts';
import type {
  BatchCreateBody,
  BatchDeleteBody,
  BatchUpdateBody,
  RowWriteBody,
} from '../../src/api/resources/rows-types.ts';
import { createRowNormaliser } from '../../src/api/rows/normalise-row.ts';
import type { ListRowsBody, ListRowsData, WireRow } from '../../src/api/types.ts';
import type { NormalisedRow } from '../../src/api/types.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordedRequest, RecordingServer } from '../helpers/recording-server.ts';

/** A parsed JSON value of a fixture. */
type Json = unknown;

/** Keys whose value identifies something the sync may need; their ids must survive parsing. */
const ID_KEYS: ReadonlySet<string> = new Set([
  'id',
  'worksheetId',
  'sectionId',
  'appId',
  'organizationId',
  'accountId',
  'rowid',
  'rowId',
  'sid',
  'departmentId',
  'key',
  'dataSource',
  'sourceField',
  'file_id',
]);
const ID_LIST_KEYS: ReadonlySet<string> = new Set([
  'rowIds',
  'successfulRowIds',
  'succeededRowIds',
  'failedRowIds',
  'showFields',
]);
const ID_FORM = /^(?:[0-9a-f]{24}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/**
 * Ids in `data`: with `pick`, the `id` of every object it accepts; without, every UUID or
 * 24-hex id under an identifying key (or in an id list).
 */
function collectIds(data: Json, pick?: (node: Record<string, Json>) => boolean): string[] {
  const out: string[] = [];
  const walk = (node: Json) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, Json>;
    if (pick !== undefined) {
      if (pick(record) && typeof record.id === 'string') out.push(record.id);
    } else {
      for (const [key, value] of Object.entries(record)) {
        if (ID_KEYS.has(key) && typeof value === 'string' && ID_FORM.test(value)) out.push(value);
        if (ID_LIST_KEYS.has(key) && Array.isArray(value)) {
          out.push(...value.filter((v): v is string => typeof v === 'string' && ID_FORM.test(v)));
        }
      }
    }
    Object.values(record).forEach(walk);
  };
  walk(data);
  return out;
}

/** Every string value anywhere in a parsed result. */
function collectStrings(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, into);
  else if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    for (const v of Object.values(value)) collectStrings(v, into);
  }
  return into;
}

/** Keys of a raw row that are not field values (platform-shapes §5, §6 and the older export). */
const NOT_VALUES: ReadonlySet<string> = new Set([
  'id',
  'rowid',
  'autoid',
  'createdAt',
  'createdBy',
  'updatedAt',
  'updatedBy',
  'ownerBy',
]);
/** Asia/Shanghai has kept +08:00 all year since 1991. */
const ZONE_OFFSET = '+08:00';

interface ExpectedRow {
  id: string;
  values: Record<string, Json>;
  createdAt: number | undefined;
  updatedAt: number | undefined;
  createdBy: string | undefined;
  updatedBy: string | undefined;
  owner: string | undefined;
}

/** What a sync must get from a raw `{rows, total?}`, worked out without the client's code. */
function expectedRows(data: Json): { rows: ExpectedRow[]; total: number | undefined } {
  const page = data as Record<string, Json>;
  const first = (row: Record<string, Json>, keys: string[]) =>
    keys.map((k) => row[k]).find((v) => v !== undefined);
  const instant = (value: Json) =>
    typeof value === 'string' ? Date.parse(`${value.replace(' ', 'T')}${ZONE_OFFSET}`) : undefined;
  const account = (value: Json) => {
    const user = value as { accountId?: string; id?: string } | undefined;
    return user === undefined ? undefined : (user.accountId ?? user.id);
  };
  const rows = (page.rows as Array<Record<string, Json>>).map((row) => ({
    id: (row.id ?? row.rowid) as string,
    values: Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('_') && !NOT_VALUES.has(k))),
    createdAt: instant(first(row, ['_createdAt', '_createAt', 'createdAt'])),
    updatedAt: instant(first(row, ['_updatedAt', 'updatedAt'])),
    createdBy: account(first(row, ['_createdBy', '_createBy', 'createdBy'])),
    updatedBy: account(first(row, ['_updatedBy', 'updatedBy'])),
    owner: account(first(row, ['_owner', 'ownerBy'])),
  }));
  const total = page.total ?? page['total\t'];
  return { rows, total: total === undefined ? undefined : Number(total) };
}

const EXAMPLES = path.resolve(import.meta.dirname, '../../../shared/spec/platform-examples');
/** The organisation zone the answers' zone-less timestamps are read in. */
const ZONE = 'Asia/Shanghai';
const WS = '66b2a41c9e07d35f18c4b301';
const ROW = '8f3a1c6e-2b94-4d7f-a051-6c9e2d8b4f17';
const RELATION_FIELD = 'customer';

interface Fixture {
  file: string;
  operation: string;
  method: string;
  path: string;
  request: { body?: Json; query?: Record<string, string | number | boolean> };
  answer: Json;
  variants?: Array<{ why: string; answer: Json }>;
}

const fixtures: Fixture[] = readdirSync(EXAMPLES)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    ...(JSON.parse(readFileSync(path.join(EXAMPLES, file), 'utf8')) as Omit<Fixture, 'file'>),
  }));

/** The structure the row answers belong to (worksheet-get.json's main answer), as the sync would hold it. */
const structureFixture = fixtures.find(
  (f) => f.method === 'GET' && f.path === '/v3/app/worksheets/{worksheet_id}',
);
const structure =
  structureFixture === undefined
    ? undefined
    : parseWorksheetStructure((structureFixture.answer as { data: unknown }).data, {
        operation: 'fixture',
        method: 'GET',
        path: structureFixture.path,
      });
const normalise = createRowNormaliser({ timeZone: ZONE, ...(structure === undefined ? {} : { structure }) });

interface Context {
  fixture: Fixture;
  data: Json;
  request: RecordedRequest;
}

interface Operation {
  /** Calls the client for the fixture; resolves to what the sync goes on with. */
  call(client: PlatformClient, fixture: Fixture): Promise<unknown>;
  /** Asserts the values a sync needs against the raw answer. */
  check(result: unknown, ctx: Context): void;
}

const body = <T>(f: Fixture) => f.request.body as T;
const rowsOf = (list: ListRowsData) => ({
  total: list.total,
  rows: list.rows.map((row: WireRow) => normalise(row)),
});

function checkRows(result: unknown, data: Json): void {
  const { rows, total } = result as { rows: NormalisedRow[]; total?: number };
  const expected = expectedRows(data);
  expect(rows.map((row) => row.id)).toEqual(expected.rows.map((row) => row.id));
  expected.rows.forEach((want, at) => {
    const got = rows[at]!;
    for (const [key, value] of Object.entries(want.values))
      expect(got.values[key], `value ${key}`).toEqual(value);
    // Values are reachable by id and by alias whichever key the answer used.
    for (const field of structure?.fields ?? []) {
      const byId = got.values[field.id];
      if (
        field.alias !== undefined &&
        field.alias !== '' &&
        (field.alias in want.values || field.id in want.values)
      ) {
        expect(got.values[field.alias], `alias ${field.alias}`).toEqual(byId);
      }
    }
    expect(got.createdAt?.getTime()).toBe(want.createdAt);
    expect(got.updatedAt?.getTime()).toBe(want.updatedAt);
    expect(got.createdBy?.accountId).toBe(want.createdBy);
    expect(got.updatedBy?.accountId).toBe(want.updatedBy);
    expect(got.owner?.accountId).toBe(want.owner);
  });
  if (total !== undefined || expected.total !== undefined) expect(total).toBe(expected.total);
}

/** `METHOD path` of a fixture → the client call that serves it. */
const OPERATIONS: Record<string, Operation> = {
  'GET /v3/app': {
    call: async (c) => {
      const app = await c.apps.get();
      return { app, worksheets: listAppWorksheets(app) };
    },
    check(result, { data }) {
      const { worksheets } = result as { worksheets: Array<{ id: string }> };
      // Oracle: every item object anywhere in the answer whose type is 0 (worksheet).
      const items = collectIds(data, (node) => node.type === 0);
      expect(worksheets.map((w) => w.id).sort()).toEqual([...new Set(items)].sort());
    },
  },
  'POST /v3/app/worksheets/list': {
    call: (c, f) => c.worksheets.list(body(f)),
    check(result, { data }) {
      const ids =
        typeof data === 'string'
          ? (data.match(/\b[0-9a-f]{24}\b/g) ?? [])
          : (data as Array<{ id: string }>).map((w) => w.id);
      expect((result as Array<{ id: string }>).map((w) => w.id)).toEqual(ids);
    },
  },
  'GET /v3/app/worksheets/{worksheet_id}': {
    call: (c) => c.worksheets.get(WS),
    check(result, { data }) {
      const raw = data as { worksheetId?: string; id?: string; fields: Array<Record<string, Json>> };
      const got = result as NonNullable<typeof structure>;
      expect(got.id).toBe(raw.worksheetId ?? raw.id);
      expect(got.fields.map((f) => f.id)).toEqual(raw.fields.map((f) => f.id));
      got.fields.forEach((field, at) => {
        const rawField = raw.fields[at]!;
        // A name, never a code: the sync maps names.
        expect(field.type, `type of ${field.id}`).toMatch(/^[A-Z][A-Za-z]+$/);
        if (typeof rawField.type === 'string') expect(field.type).toBe(rawField.type);
        const rawOptions = (rawField.options ?? []) as Array<Record<string, Json>>;
        expect((field.options ?? []).map((o) => o.key)).toEqual(rawOptions.map((o) => o.key));
        (field.options ?? []).forEach((option, i) => {
          expect(option.isDeleted).toBe(String(rawOptions[i]!.isDeleted) === 'true');
          expect(option.index).toBe(Number(rawOptions[i]!.index));
        });
      });
    },
  },
  'POST /v3/app/worksheets/{worksheet_id}/rows/list': {
    call: async (c, f) => rowsOf(await c.rows.list(WS, body<ListRowsBody>(f))),
    check: (result, { data }) => checkRows(result, data),
  },
  'GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}': {
    call: async (c, f) => ({ rows: [normalise(await c.rows.get(WS, ROW, f.request.query))] }),
    check: (result, { data }) => checkRows(result, { rows: [data] }),
  },
  'GET /v3/app/worksheets/{worksheet_id}/rows/{row_id}/relations/{field}': {
    call: async (c, f) => rowsOf(await c.rows.relations(WS, ROW, RELATION_FIELD, f.request.query)),
    check(result, { data, request }) {
      checkRows(result, data);
      expect(request.query.isReturnSystemFields).toBe('true');
    },
  },
  'POST /v3/app/worksheets/{worksheet_id}/rows': {
    call: (c, f) => c.rows.create(WS, body<RowWriteBody>(f)),
    check(result, { data }) {
      const id = (data as { id?: string } | undefined)?.id;
      // An empty id (the export's example) means: no id known.
      expect((result as { id?: string }).id).toBe(id === '' ? undefined : id);
    },
  },
  'PATCH /v3/app/worksheets/{worksheet_id}/rows/{row_id}': {
    call: (c, f) => c.rows.update(WS, ROW, body<RowWriteBody>(f)),
    check: (result, { data }) =>
      expect(result).toEqual({ id: (data as { id?: string } | undefined)?.id ?? ROW }),
  },
  'DELETE /v3/app/worksheets/{worksheet_id}/rows/{row_id}': {
    call: (c, f) => c.rows.delete(WS, ROW, body(f)),
    check: (result) => expect(result).toBeUndefined(),
  },
  'POST /v3/app/worksheets/{worksheet_id}/rows/batch': {
    call: (c, f) => c.rows.batchCreate(WS, body<BatchCreateBody>(f)),
    check(result, { data, fixture }) {
      const raw = data as { rowIds?: Json[]; rows?: Json[] };
      const ids = (raw.rowIds ?? raw.rows ?? []).map((entry) =>
        typeof entry === 'string' ? entry : (entry as { id: string }).id,
      );
      expect(ids).toHaveLength(body<BatchCreateBody>(fixture).rows.length);
      expect((result as { rowIds: string[] }).rowIds).toEqual(ids);
    },
  },
  'PATCH /v3/app/worksheets/{worksheet_id}/rows/batch': {
    call: (c, f) => c.rows.batchUpdate(WS, body<BatchUpdateBody>(f)),
    check(result, { data }) {
      const raw = data as { failedRowIds: string[]; successfulRowIds?: string[]; succeededRowIds?: string[] };
      expect(result).toEqual({
        failedRowIds: raw.failedRowIds,
        successfulRowIds: raw.successfulRowIds ?? raw.succeededRowIds,
      });
    },
  },
  'DELETE /v3/app/worksheets/{worksheet_id}/rows/batch': {
    call: (c, f) => c.rows.batchDelete(WS, body<BatchDeleteBody>(f)),
    check: (result) => expect(result).toBeUndefined(),
  },
  'POST /v3/app/worksheets/{worksheet_id}/rows/pivot': {
    call: (c, f) => c.rows.pivot(WS, body<PivotBody>(f)),
    check(result, { data }) {
      const raw = data as { pivot: Array<{ values: Json }>; summary: Json; totalPages: number };
      const got = result as { pivot: Array<{ values: Json }>; summary: Json; totalPages: number };
      expect(got.pivot.map((p) => p.values)).toEqual(raw.pivot.map((p) => p.values));
      expect(got.summary).toEqual(raw.summary);
      expect(got.totalPages).toBe(raw.totalPages);
    },
  },
  'GET /v3/users/lookup': {
    call: (c, f) => c.lookups.users(f.request.query as LookupQuery),
    check(result, { data, request }) {
      const raw = (
        data as { users: Array<{ accountId?: string; id?: string; fullname?: string; name?: string }> }
      ).users;
      expect(result).toMatchObject(
        raw.map((u) => ({ accountId: u.accountId ?? u.id, fullname: u.fullname ?? u.name })),
      );
      expect(request.query.name).toBe(String(request.query.name));
    },
  },
  'GET /v3/departments/lookup': {
    call: (c, f) => c.lookups.departments(f.request.query as LookupQuery),
    check(result, { data }) {
      const raw = (data as { departments: Array<{ id: string; name: string }> }).departments;
      expect(result).toMatchObject(raw.map((d) => ({ id: d.id, name: d.name })));
    },
  },
  'GET /v3/regions': {
    call: (c, f) => c.lookups.regions(f.request.query),
    check(result, { data }) {
      const raw = (data as { regions: Array<{ id: string }> }).regions;
      expect((result as Array<{ id: string }>).map((r) => r.id)).toEqual(raw.map((r) => r.id));
    },
  },
};

function pattern(template: string): RegExp {
  return new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

function failureCode(answer: Json): number | undefined {
  const env = answer as { success?: unknown; error_code?: number; code?: number; errorCode?: number };
  return env.success === false ? (env.error_code ?? env.code ?? env.errorCode) : undefined;
}

let server: RecordingServer;
let client: PlatformClient;
let limiter: RateLimiter;

beforeAll(async () => {
  server = await startRecordingServer();
  limiter = createRateLimiter({
    budgetKey: 'test:client-contract',
    initialRatePerSec: 1000,
    maxRatePerSec: 1000,
    burstMs: 1000,
  });
  client = createPlatformClient({
    baseUrl: server.url,
    credentials: { kind: 'appkey', appKey: 'contract-key', sign: 'contract-sign' },
    retry: { retries: 0, unknownRetries: 0 },
    limiter,
    organisation: { timeZone: ZONE },
  });
});
afterAll(async () => {
  await client.close();
  await limiter.stop();
  await server.close();
});
beforeEach(() => server.reset());

it('finds the platform examples', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(16);
  expect(structure?.id).toBe(WS);
});

describe.each(fixtures.map((f) => [f.file, f] as const))('%s', (_file, fixture) => {
  const key = `${fixture.method} ${fixture.path}`;
  const answers = [
    { label: 'answer', answer: fixture.answer },
    ...(fixture.variants ?? []).map((v, i) => ({
      label: `variant ${i + 1}: ${v.why.slice(0, 70)}`,
      answer: v.answer,
    })),
  ];

  it.each(answers.map((a) => [a.label, a] as const))('%s', async (_label, { answer }) => {
    const operation = OPERATIONS[key];
    if (operation === undefined) {
      throw new Error(
        `${fixture.file}: no client operation for "${key}" (${fixture.operation}); add it to OPERATIONS in test/contract/client-contract.test.ts`,
      );
    }
    const route = pattern(fixture.path);
    server.respond((req) =>
      req.method === fixture.method && route.test(req.path)
        ? { body: answer }
        : { status: 404, body: `no route for ${req.method} ${req.path}` },
    );
    const outcome = await operation.call(client, fixture).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const request = server.last();
    expect(`${request.method} ${request.path}`).toMatch(new RegExp(`^${fixture.method} `));
    if (fixture.request.body !== undefined)
      expect(request.body).toMatchObject(fixture.request.body as object);
    for (const [name, value] of Object.entries(fixture.request.query ?? {}))
      expect(request.query[name]).toBe(String(value));

    const code = failureCode(answer);
    if (code !== undefined) {
      expect(outcome.ok, 'a failure answer must reject').toBe(false);
      const error = (outcome as { error: unknown }).error;
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).errorCode).toBe(code);
      expect(classifyError(error)).toBe(categoryOfCode(code));
      return;
    }
    const data = (answer as { data?: Json }).data;
    if (!outcome.ok && key === 'POST /v3/app/worksheets/{worksheet_id}/rows/batch') {
      // The export's batch-create example answers fewer ids than rows were sent.
      expect(outcome.error).toBeInstanceOf(BatchCountMismatchError);
      expect(classifyError(outcome.error)).toBe('ambiguous');
      return;
    }
    if (!outcome.ok) throw outcome.error;
    operation.check(outcome.value, { fixture, data, request });

    // A renamed key must not make an id vanish: every id at an identifying key of the
    // answer's data is somewhere in what the client handed back.
    const kept = collectStrings(outcome.value);
    for (const id of collectIds(data))
      expect(kept.has(id), `id ${id} of the answer is missing from the parsed result`).toBe(true);
  });
});
