import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

/**
 * Row rules of the platform dialect that the examples do not show one by one: single
 * member and relation fields refuse several ids (10002), API writes are the API user's,
 * lists are newest first by default, and a ctime bound copied from `_createdAt` means
 * the instant it was served for.
 */
interface Envelope {
  success: boolean;
  error_code?: number;
  error_msg?: string;
  data: Record<string, unknown> & { rows?: Array<Record<string, unknown>> };
}

let emulator: EmulatorHandle;
let headers: Record<string, string>;
let clock = Date.parse('2025-03-01T00:00:00Z');
let ws: string;
let customers: string;
const ADA = 'a0000000-0000-4000-8000-000000000001';
const BEN = 'a0000000-0000-4000-8000-000000000002';

async function call(method: string, path: string, body?: unknown): Promise<Envelope> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as Envelope;
}

const list = (body: Record<string, unknown>) =>
  call('POST', `/v3/app/worksheets/${ws}/rows/list`, { pageSize: 10, pageIndex: 1, ...body });
const names = (answer: Envelope) => (answer.data.rows ?? []).map((r) => r['name']);

beforeAll(async () => {
  emulator = await startEmulator({ now: () => clock });
  const app = emulator.createApp({ name: 'Rules' });
  headers = { 'HAP-Appkey': app.appKey, 'HAP-Sign': app.sign, 'content-type': 'application/json' };
  customers = emulator.createWorksheet(app.appId, {
    name: 'Customers',
    fields: [{ name: 'Name', alias: 'name', type: 'Text', isTitle: true }],
  }).id;
  ws = emulator.createWorksheet(app.appId, {
    name: 'Projects',
    fields: [
      { name: 'Name', alias: 'name', type: 'Text', isTitle: true },
      { name: 'Lead', alias: 'lead', type: 'Collaborator', subType: 0 },
      { name: 'Team', alias: 'team', type: 'Collaborator', subType: 1 },
      { name: 'Customer', alias: 'customer', type: 'Relation', dataSource: customers, subType: 1 },
    ],
  }).id;
  for (const name of ['first', 'second', 'third']) {
    await call('POST', `/v3/app/worksheets/${ws}/rows`, { fields: [{ id: 'name', value: name }] });
    clock += 60_000;
  }
});
afterAll(async () => {
  await emulator.close();
});

describe('platform dialect row rules', () => {
  it('a single member field refuses two members with 10002 and takes one; a multiple one takes two', async () => {
    const write = (field: string, value: string[]) =>
      call('POST', `/v3/app/worksheets/${ws}/rows`, { fields: [{ id: field, value }] });
    const refused = await write('lead', [ADA, BEN]);
    expect(refused).toMatchObject({ success: false, error_code: 10002 });
    expect(refused.error_msg).toContain('lead');
    expect((await write('lead', [ADA])).success).toBe(true);
    expect((await write('team', [ADA, BEN])).success).toBe(true);
  });

  it('a single relation field refuses two rows with 10002', async () => {
    const made = await call('POST', `/v3/app/worksheets/${customers}/rows/batch`, {
      rows: [{ fields: [{ id: 'name', value: 'A' }] }, { fields: [{ id: 'name', value: 'B' }] }],
    });
    const ids = made.data['rowIds'] as string[];
    const refused = await call('POST', `/v3/app/worksheets/${ws}/rows`, {
      fields: [{ id: 'customer', value: ids }],
    });
    expect(refused).toMatchObject({ success: false, error_code: 10002 });
  });

  it("an API write is the API user's and leaves the owner unassigned", async () => {
    const answer = await list({ includeSystemFields: true, filter: cond('name', 'eq', ['first']) });
    expect(answer.data.rows?.[0]).toMatchObject({
      _createdBy: { accountId: 'user-api', fullname: 'API' },
      _updatedBy: { accountId: 'user-api' },
      _owner: { accountId: 'user-undefined' },
    });
  });

  it('lists newest first without sorts, and a sort without isAsc descends', async () => {
    const only = { filter: cond('name', 'eq', ['first', 'second', 'third']) };
    expect(names(await list(only))).toEqual(['third', 'second', 'first']);
    expect(names(await list({ pageSize: 1, pageIndex: 2 }))).toHaveLength(1);
    expect(names(await list({ ...only, pageSize: 1, pageIndex: 3 }))).toEqual(['first']);
    expect(names(await list({ ...only, sorts: [{ field: 'name' }] }))).toEqual(['third', 'second', 'first']);
    expect(names(await list({ ...only, sorts: [{ field: 'ctime', isAsc: true }] }))).toEqual([
      'first',
      'second',
      'third',
    ]);
  });

  it("a ctime bound copied from a row's _createdAt is read in the zone it was served in", async () => {
    const second = await list({ includeSystemFields: true, filter: cond('name', 'eq', ['second']) });
    const at = second.data.rows?.[0]?.['_createdAt'] as string;
    expect(at).toBe('2025-03-01 08:01:00'); // Asia/Shanghai, the default organisation zone
    const only = cond('name', 'eq', ['first', 'second', 'third']);
    const from = await list({
      filter: group([only, cond('ctime', 'ge', [at])]),
      sorts: [{ field: 'ctime', isAsc: true }],
    });
    expect(names(from)).toEqual(['second', 'third']);
    const range = await list({ filter: group([only, cond('ctime', 'between', [at, at])]) });
    expect(names(range)).toEqual(['second']);
  });
});

function cond(field: string, operator: string, value: unknown[]) {
  return { type: 'group', logic: 'AND', children: [{ type: 'condition', field, operator, value }] };
}

function group(children: unknown[]) {
  return { type: 'group', logic: 'AND', children };
}
