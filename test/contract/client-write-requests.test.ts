/**
 * The requests the sync builds, against the requests of the platform's own examples
 * (platform-examples/*.json `request`, platform-shapes §7 and §8): a job spec's mapping,
 * compiled and applied as a run does (parseJobSpec, validateMapping, mapRecord), sent
 * through the real client to a recording server; and a pull job's filter read through
 * the worksheet reader. A recording server rather than the emulator: this checks what
 * goes out, whatever the emulator of the day accepts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseWorksheetStructure } from '../../src/api/answers/parse-worksheet-structure.ts';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import { FilterError } from '../../src/api/rows/row-errors.ts';
import type { FieldValue, WorksheetStructure } from '../../src/api/types.ts';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { mapRecord } from '../../src/sync/mapping/map-record.ts';
import { validateMapping } from '../../src/sync/mapping/validate-mapping.ts';
import { createWorksheetReader } from '../../src/sync/pull/read-worksheet-rows.ts';
import { envelope, startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordedRequest, RecordingServer } from '../helpers/recording-server.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../../../shared/spec/platform-examples');
const ZONE = 'Asia/Shanghai';

interface Example {
  path: string;
  request: { body?: Record<string, unknown> };
  answer: { data?: unknown };
}

function example(file: string): Example {
  return JSON.parse(readFileSync(path.join(EXAMPLES, file), 'utf8')) as Example;
}

const sheet = example('worksheet-get.json');
const structure: WorksheetStructure = parseWorksheetStructure(sheet.answer.data, {
  operation: 'fixture',
  method: 'GET',
  path: sheet.path,
});
const WS = structure.id;
const fieldOf = (ref: string) => structure.fields.find((f) => f.id === ref || f.alias === ref)!;

/**
 * A FieldValue list keyed by field id, in field order. The examples name fields by alias
 * or id (both allowed, §7); a select's absent `type` is "1", its default (§7 [C]).
 */
function byFieldId(fields: readonly FieldValue[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const fv of fields) {
    const field = fieldOf(fv.id);
    const select = ['SingleSelect', 'MultipleSelect', 'Dropdown'].includes(field.type);
    out[field.id] = { value: fv.value, type: fv.type ?? (select ? '1' : undefined) };
  }
  return out;
}

/** The push job a user would write to send the example's values, mapped as a run maps them. */
function mapped(fields: Record<string, string>, record: Record<string, unknown>): FieldValue[] {
  const lines = Object.entries(fields).map(([target, spec]) => `  ${target}: ${spec}`);
  const yaml = `name: writes\nsource: { type: ndjson, path: ./in.ndjson }\ntarget: { worksheet: ${WS}, mode: append }\nfields:\n${lines.join('\n')}\n`;
  const spec = parseJobSpec(yaml, 'jobs/writes.yaml');
  // The examples write some fields of a row; none is required here, so a mapping of a few passes.
  const partial = { ...structure, fields: structure.fields.map((f) => ({ ...f, required: false })) };
  const plan = validateMapping(spec.mappings, partial, { mode: 'append', targetTimezone: ZONE });
  const result = mapRecord(plan, record);
  if (!result.ok) throw new Error(`mapping rejected the record: ${JSON.stringify(result.errors)}`);
  return result.fields;
}

let server: RecordingServer;
let client: PlatformClient;
let limiter: RateLimiter;

beforeAll(async () => {
  server = await startRecordingServer();
  limiter = createRateLimiter({
    budgetKey: 'test:client-write-requests',
    initialRatePerSec: 1000,
    maxRatePerSec: 1000,
    burstMs: 1000,
  });
  client = createPlatformClient({
    baseUrl: server.url,
    credentials: { kind: 'appkey', appKey: 'write-key', sign: 'write-sign' },
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

function expectPrefixedHeaders(req: RecordedRequest): void {
  // §1 [C]: HAP-Appkey and HAP-Sign (node lower-cases header names).
  expect(req.headers['hap-appkey']).toBe('write-key');
  expect(req.headers['hap-sign']).toBe('write-sign');
}

describe('write bodies per field kind (row-create.json)', () => {
  const fixture = example('row-create.json');
  const wanted = (fixture.request.body!.fields as FieldValue[]).filter(
    // Location is not a type rowbridge writes (create-coercer.ts WRITABLE_FIELD_TYPES).
    (fv) => fieldOf(fv.id).type !== 'Location',
  );

  it('sends what the example sends, for every kind the sync writes', async () => {
    const fields = mapped(
      {
        project_name: 'name',
        budget: 'budget',
        fee: 'fee',
        status: 'status',
        tags: 'tags',
        priority: 'priority',
        start_date: 'start',
        due_at: 'due',
        standup_time: 'standup',
        is_active: 'active',
        lead: 'lead',
        team: 'team',
        region: 'region',
        customer: '{ from: customer, relationKey: rowid }',
        files: 'files',
        rating: 'stars',
        contact_email: 'email',
      },
      {
        name: 'Harbor Bridge Retrofit',
        budget: '125,000.50',
        fee: 980,
        status: 'Active',
        tags: ['Civil', 'Steel'],
        priority: 'High',
        start: '2025-03-14',
        // An instant: written as the organisation's wall clock (Asia/Shanghai, +08:00).
        due: '2025-04-30T09:00:00Z',
        standup: '9:30:59',
        active: 'yes',
        lead: 'f2b7d0a9-1c64-4e38-b5a2-8d9c3e6f0b71',
        team: 'd9a4f1c3-8b27-4e60-a5d9-1c7e3b0f6a82',
        region: 310104,
        customer: '3e9a0d6b-4c71-4b2e-8f05-d7a1c9e3b648',
        files: [{ name: 'site-plan.pdf', url: 'https://files.example.com/doc/site-plan.pdf' }],
        stars: 4,
        email: 'ops@northwind.example',
      },
    );
    server.respondWithData({ id: '8f3a1c6e-2b94-4d7f-a051-6c9e2d8b4f17' });
    await client.rows.create(WS, { fields, triggerWorkflow: false });
    const req = server.last();
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/v3/app/worksheets/${WS}/rows`);
    expectPrefixedHeaders(req);
    const sent = req.body as { fields: FieldValue[]; triggerWorkflow: boolean };
    expect(sent.triggerWorkflow).toBe(false);
    expect(byFieldId(sent.fields)).toEqual(byFieldId(wanted));
  });
});

describe('filters the sync sends (rows-list.json)', () => {
  const listed = example('rows-list.json');
  const conditions = (listed.request.body!.filter as { children: unknown[] }).children.flatMap((c) =>
    (c as { type: string }).type === 'group' ? (c as { children: unknown[] }).children : [c],
  );

  /** A pull job's source filter, read through the worksheet reader as a run reads it. */
  async function pull(filter: string): Promise<RecordedRequest[]> {
    const yaml = `name: export\nsource: { type: worksheet, worksheet: ${WS}, filter: ${filter} }\nsink: { type: ndjson, path: ./out.ndjson }\nfields:\n  name: project_name\n`;
    const spec = parseJobSpec(yaml, 'jobs/export.yaml');
    if (spec.source.type !== 'worksheet') throw new Error('expected a worksheet source');
    server.respond((req) =>
      req.method === 'GET' ? { body: sheet.answer } : { body: envelope({ rows: [], total: 0 }) },
    );
    const read = createWorksheetReader(() => client);
    for await (const row of read({
      worksheet: WS,
      ...(spec.source.filter ? { filter: spec.source.filter } : {}),
    }))
      void row;
    return server.requests;
  }

  it('sends condition values as arrays of strings, as the example does', async () => {
    const requests = await pull(
      '{ type: group, logic: AND, children: [' +
        '{ type: group, logic: AND, children: [{ type: condition, field: status, operator: in, value: [4e2a8d61-7c35-4b0f-9a18-d6f3c2b5e719, 0b7c1f52-3a6e-4d19-8c27-5e1a9b3d7f40] }, { type: condition, field: utime, operator: between, value: ["2025-03-01 00:00:00", "2025-03-31 23:59:59"] }] },' +
        '{ type: group, logic: OR, children: [{ type: condition, field: budget, operator: ge, value: 10000 }, { type: condition, field: project_name, operator: contains, value: Harbor }] }] }',
    );
    const list = requests.find((r) => r.method === 'POST')!;
    expectPrefixedHeaders(list);
    const sent = (list.body as { filter: { type: string; children: Array<{ children: unknown[] }> } }).filter;
    expect(sent.type).toBe('group');
    expect(sent.children.flatMap((g) => g.children)).toEqual(conditions);
  });

  it('refuses an operator the field type lacks, with the allowed list, before reading a row', async () => {
    const err = await pull('{ type: condition, field: region, operator: eq, value: "310104" }').catch(
      (error: unknown) => error,
    );
    expect(err).toBeInstanceOf(FilterError);
    expect((err as Error).message).toBe(
      'filter on worksheet "Projects" at source.filter: field "region" (Region) does not support operator "eq"; allowed: in, notin, belongsto, notbelongsto, isempty, isnotempty',
    );
    expect(server.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});
