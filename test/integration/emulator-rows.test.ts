import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

interface Envelope<T> {
  success: boolean;
  error_code: number;
  error_msg: string;
  data: T;
}
interface RowField {
  id: string;
  alias: string;
  value: unknown;
  type: string;
  controlName: string;
}
interface FieldsRow {
  id: string;
  fields: RowField[];
  _createdAt: string;
  _updatedAt: string;
  _createdBy: { accountId: string; fullname: string };
  _owner: { accountId: string };
}

let emulator: EmulatorHandle;
let headers: Record<string, string>;
let companies: WorksheetStructure;
let sheet: WorksheetStructure;

async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
): Promise<Envelope<T>> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Envelope<T>;
}

const rows = (ws = sheet.id) => `/v3/app/worksheets/${ws}/rows`;
const value = (row: FieldsRow, alias: string) => row.fields.find((f) => f.alias === alias)?.value;
const optionKey = (alias: string, text: string) =>
  sheet.fields.find((f) => f.alias === alias)!.options!.find((o) => o.value === text)!.key;

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'spec', maxOptionsPerField: 3, maxAttachmentsPerField: 2 });
  const app = emulator.createApp({ name: 'Rows' });
  headers = { 'APP-Appkey': app.appKey, 'APP-Sign': app.sign };
  companies = emulator.createWorksheet(app.appId, {
    name: 'Companies',
    alias: 'companies',
    fields: [{ name: 'Name', alias: 'name', type: 'Text', isTitle: true }],
  });
});

afterAll(async () => {
  await emulator.close();
});

beforeEach(() => {
  const appId = emulator.state.apps()[0]!.id;
  sheet = emulator.createWorksheet(appId, {
    name: 'Contacts',
    fields: [
      { name: 'Name', alias: 'name', type: '2', required: true, isTitle: true },
      { name: 'Email', alias: 'email', type: 'Email', isUnique: true },
      { name: 'Amount', alias: 'amount', type: 'Number' },
      {
        name: 'Status',
        alias: 'status',
        type: 'SingleSelect',
        options: [
          { value: 'Open', index: 1 },
          { value: 'Closed', index: 2 },
        ],
      },
      { name: 'Tags', alias: 'tags', type: 'MultipleSelect', options: [{ value: 'a', index: 1 }] },
      { name: 'Files', alias: 'files', type: 'Attachment' },
      { name: 'Company', alias: 'company', type: 'Relation', dataSource: companies.id },
      { name: 'Score', alias: 'score', type: 'Formula' },
      { name: 'Done', alias: 'done', type: 'Checkbox' },
      { name: 'Due', alias: 'due', type: 'Date' },
      { name: 'Seen', alias: 'seen', type: 'DateTime' },
    ],
  });
});

describe('emulator rows: single writes and reads', () => {
  it('creates a row, reads it back in the spec shape with system fields, and updates it', async () => {
    const created = await call<{ id: string }>('POST', rows(), {
      fields: [
        { id: 'name', value: 'Ann' },
        { id: sheet.fields[2]!.id, value: 9.99 },
        { id: 'status', value: [optionKey('status', 'Open')] },
        { id: 'done', value: true },
        { id: 'due', value: '2024-03-25' },
        { id: 'seen', value: '2024-03-25 15:52' },
      ],
      triggerWorkflow: false,
    });
    expect(created.success).toBe(true);
    expect(created.error_code).toBe(1);
    expect(created.data.id).toMatch(/^[0-9a-f-]{36}$/);

    const got = await call<FieldsRow>('GET', `${rows()}/${created.data.id}`);
    expect(got.data.id).toBe(created.data.id);
    expect(value(got.data, 'name')).toBe('Ann');
    expect(value(got.data, 'amount')).toBe('9.99');
    expect(value(got.data, 'status')).toEqual([{ key: optionKey('status', 'Open'), value: 'Open' }]);
    expect(value(got.data, 'done')).toBe('1');
    expect(value(got.data, 'due')).toBe('2024-03-25');
    expect(value(got.data, 'seen')).toBe('2024-03-25 15:52:00');
    expect(got.data.fields.find((f) => f.alias === 'name')).toMatchObject({ type: '2', controlName: 'Name' });
    expect(got.data._createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(got.data._createdBy.fullname).toBe('Ada Admin');
    expect(got.data._owner.accountId).toBe(got.data._createdBy.accountId);

    const projected = await call<FieldsRow>(
      'GET',
      `${rows()}/${created.data.id}?fields=name,done&includeSystemFields=false`,
    );
    expect(projected.data.fields.map((f) => f.alias)).toEqual(['name', 'done']);
    expect(projected.data._createdAt).toBeUndefined();

    const updated = await call<{ id: string }>('PATCH', `${rows()}/${created.data.id}`, {
      fields: [{ id: 'amount', value: '12' }],
    });
    expect(updated.data.id).toBe(created.data.id);
    const stored = emulator.state.row(sheet.id, created.data.id)!;
    expect(stored.values).toMatchObject({ name: 'Ann', amount: 12, done: true });
    expect(stored.text['status']).toBe('Open');
    expect(Date.parse(stored.updatedAt)).toBeGreaterThanOrEqual(Date.parse(stored.createdAt));
  });

  it('creates options from text with field-value type "2" and rejects unknown keys otherwise (10002)', async () => {
    const bad = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'status', value: ['Pending'] },
      ],
    });
    expect(bad.success).toBe(false);
    expect(bad.error_code).toBe(10002);
    expect(bad.error_msg).toContain('status');

    const ok = await call<{ id: string }>('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'status', value: ['Pending'], type: '2' },
      ],
    });
    expect(ok.success).toBe(true);
    const structure = emulator.state.worksheet(sheet.id)!;
    expect(structure.fields.find((f) => f.alias === 'status')!.options!.map((o) => o.value)).toEqual([
      'Open',
      'Closed',
      'Pending',
    ]);
  });

  it('rejects values of the wrong form with 10002 naming the field', async () => {
    for (const [alias, wrong] of [
      ['amount', 'ten'],
      ['due', '25/03/2024'],
      ['done', 'maybe'],
      ['seen', '2024-13-01 00:00:00'],
    ] as const) {
      const res = await call('POST', rows(), {
        fields: [
          { id: 'name', value: 'x' },
          { id: alias, value: wrong },
        ],
      });
      expect(res.error_code, alias).toBe(10002);
      expect(res.error_msg).toContain(alias);
    }
    const single = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'status', value: [optionKey('status', 'Open'), optionKey('status', 'Closed')] },
      ],
    });
    expect(single.error_code).toBe(10002);
    expect(emulator.state.rowCount(sheet.id)).toBe(0);
  });

  it('rejects writes to read-only field types (10002) and unknown fields (10001)', async () => {
    const readOnly = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'score', value: 3 },
      ],
    });
    expect(readOnly.error_code).toBe(10002);
    expect(readOnly.error_msg).toContain('read-only');
    const unknown = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'nope', value: 3 },
      ],
    });
    expect(unknown.error_code).toBe(10001);
    expect(unknown.error_msg).toContain('nope');
  });

  it('enforces required (430019) and unique (100005) fields', async () => {
    const missing = await call('POST', rows(), { fields: [{ id: 'email', value: 'a@x.test' }] });
    expect(missing.error_code).toBe(430019);
    expect(missing.error_msg).toContain('name');

    const first = await call<{ id: string }>('POST', rows(), {
      fields: [
        { id: 'name', value: 'A' },
        { id: 'email', value: 'a@x.test' },
      ],
    });
    const dup = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'B' },
        { id: 'email', value: 'a@x.test' },
      ],
    });
    expect(dup.error_code).toBe(100005);
    expect(dup.error_msg).toContain('email');

    const cleared = await call('PATCH', `${rows()}/${first.data.id}`, {
      fields: [{ id: 'name', value: '' }],
    });
    expect(cleared.error_code).toBe(430019);
    // Updating a row with its own unique value is not a duplicate.
    const same = await call('PATCH', `${rows()}/${first.data.id}`, {
      fields: [{ id: 'email', value: 'a@x.test' }],
    });
    expect(same.success).toBe(true);
  });

  it('enforces the options limit (100006) and the attachments limit (100007)', async () => {
    // maxOptionsPerField is 3: the field has Open and Closed, one more fits.
    const third = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'status', value: ['Third'], type: '2' },
      ],
    });
    expect(third.success).toBe(true);
    const fourth = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'y' },
        { id: 'status', value: ['Fourth'], type: '2' },
      ],
    });
    expect(fourth.error_code).toBe(100006);

    const file = (n: number) => ({ name: `f${n}.txt`, url: `https://files.test/f${n}.txt` });
    const two = await call<{ id: string }>('POST', rows(), {
      fields: [
        { id: 'name', value: 'z' },
        { id: 'files', value: [file(1), file(2)] },
      ],
    });
    expect(two.success).toBe(true);
    const tooMany = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'w' },
        { id: 'files', value: [file(1), file(2), file(3)] },
      ],
    });
    expect(tooMany.error_code).toBe(100007);
    const append = await call('PATCH', `${rows()}/${two.data.id}`, {
      fields: [{ id: 'files', value: [file(3)], type: '1' }],
    });
    expect(append.error_code).toBe(100007);
  });

  it('answers 430022 for an unknown worksheet and 10007 for an unknown row', async () => {
    const ws = await call('POST', `/v3/app/worksheets/0123456789abcdef01234567/rows/list`, {
      pageSize: 10,
      pageIndex: 1,
    });
    expect(ws.error_code).toBe(430022);
    const row = await call('GET', `${rows()}/00000000-0000-4000-8000-000000000000`);
    expect(row.error_code).toBe(10007);
    const patch = await call('PATCH', `${rows()}/00000000-0000-4000-8000-000000000000`, {
      fields: [{ id: 'name', value: 'x' }],
    });
    expect(patch.error_code).toBe(10007);
  });
});

describe('emulator rows: batches', () => {
  it('batch create answers ids in input order and is all-or-nothing, naming the bad row', async () => {
    const ok = await call<{ rowIds: string[] }>('POST', `${rows()}/batch`, {
      rows: [1, 2, 3].map((n) => ({
        fields: [
          { id: 'name', value: `r${n}` },
          { id: 'amount', value: n },
        ],
      })),
      triggerWorkflow: false,
    });
    expect(ok.data.rowIds).toHaveLength(3);
    expect(ok.data.rowIds.map((id) => emulator.state.row(sheet.id, id)!.values['name'])).toEqual([
      'r1',
      'r2',
      'r3',
    ]);

    const bad = await call('POST', `${rows()}/batch`, {
      rows: [{ fields: [{ id: 'name', value: 'r4' }] }, { fields: [{ id: 'amount', value: 5 }] }],
    });
    expect(bad.error_code).toBe(430019);
    expect(bad.error_msg).toContain('rows[1]');
    expect(emulator.state.rowCount(sheet.id)).toBe(3);

    const dupInBatch = await call('POST', `${rows()}/batch`, {
      rows: [
        {
          fields: [
            { id: 'name', value: 'a' },
            { id: 'email', value: 'same@x.test' },
          ],
        },
        {
          fields: [
            { id: 'name', value: 'b' },
            { id: 'email', value: 'same@x.test' },
          ],
        },
      ],
    });
    expect(dupInBatch.error_code).toBe(100005);
    expect(emulator.state.rowCount(sheet.id)).toBe(3);
  });

  it('batch update writes one field set to every row and reports failedRowIds', async () => {
    const created = await call<{ rowIds: string[] }>('POST', `${rows()}/batch`, {
      rows: [{ fields: [{ id: 'name', value: 'a' }] }, { fields: [{ id: 'name', value: 'b' }] }],
    });
    const [a, b] = created.data.rowIds;
    const gone = '00000000-0000-4000-8000-00000000dead';
    const res = await call<{ successfulRowIds: string[]; failedRowIds: string[] }>(
      'PATCH',
      `${rows()}/batch`,
      {
        rowIds: [a, gone, b],
        fields: [{ id: 'amount', value: 7 }],
      },
    );
    expect(res.data.successfulRowIds).toEqual([a, b]);
    expect(res.data.failedRowIds).toEqual([gone]);
    expect(emulator.state.rows(sheet.id).map((r) => r.values['amount'])).toEqual([7, 7]);

    // A unique value can only go to one of the rows.
    const unique = await call<{ successfulRowIds: string[]; failedRowIds: string[] }>(
      'PATCH',
      `${rows()}/batch`,
      {
        rowIds: [a, b],
        fields: [{ id: 'email', value: 'one@x.test' }],
      },
    );
    expect(unique.data.successfulRowIds).toEqual([a]);
    expect(unique.data.failedRowIds).toEqual([b]);

    const wrongForm = await call('PATCH', `${rows()}/batch`, {
      rowIds: [a, b],
      fields: [{ id: 'amount', value: 'x' }],
    });
    expect(wrongForm.error_code).toBe(10002);
  });

  it('refuses batches over maxBatchRows', async () => {
    emulator.setOptions({ maxBatchRows: 2 });
    try {
      const res = await call('POST', `${rows()}/batch`, {
        rows: [1, 2, 3].map((n) => ({ fields: [{ id: 'name', value: `r${n}` }] })),
      });
      expect(res.error_code).toBe(10001);
      expect(res.error_msg).toContain('at most 2');
    } finally {
      emulator.setOptions({ maxBatchRows: 1000 });
    }
  });
});

describe('emulator rows: deletes, logs, relations, share links, discussions', () => {
  it('soft deletes hide rows and free unique values; permanent deletes remove them', async () => {
    const created = await call<{ rowIds: string[] }>('POST', `${rows()}/batch`, {
      rows: ['a', 'b', 'c'].map((n) => ({
        fields: [
          { id: 'name', value: n },
          { id: 'email', value: `${n}@x.test` },
        ],
      })),
    });
    const [a, b, c] = created.data.rowIds as [string, string, string];
    expect((await call('DELETE', `${rows()}/${a}`, {})).success).toBe(true);
    expect((await call('GET', `${rows()}/${a}`)).error_code).toBe(10007);
    expect((await call('DELETE', `${rows()}/${a}`, {})).error_code).toBe(10007);
    expect(emulator.state.row(sheet.id, a)!.deleted).toBe(true);
    const reuse = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'a2' },
        { id: 'email', value: 'a@x.test' },
      ],
    });
    expect(reuse.success).toBe(true);

    expect((await call('DELETE', `${rows()}/batch`, { rowIds: [b, c], permanent: true })).success).toBe(true);
    expect(emulator.state.row(sheet.id, b)).toBeUndefined();
    expect(emulator.state.rows(sheet.id, { includeDeleted: true }).map((r) => r.id)).not.toContain(c);
    const list = await call<{ rows: FieldsRow[]; total: number }>('POST', `${rows()}/list`, {
      pageSize: 10,
      pageIndex: 1,
      includeTotalCount: true,
    });
    expect(list.data.total).toBe(1);
  });

  it('keeps a log entry for every change, newest first, with before and after', async () => {
    const created = await call<{ id: string }>('POST', rows(), {
      fields: [
        { id: 'name', value: 'Ann' },
        { id: 'amount', value: 1 },
      ],
    });
    const id = created.data.id;
    await call('PATCH', `${rows()}/${id}`, { fields: [{ id: 'amount', value: 2 }] });
    await call('PATCH', `${rows()}/${id}`, { fields: [{ id: 'amount', value: 2 }] }); // no change, no entry
    await call('DELETE', `${rows()}/${id}`, {});
    const logs = await call<{
      logs: Array<{ action: string; changes: Array<{ alias: string; before: unknown; after: unknown }> }>;
    }>('GET', `${rows()}/${id}/logs`);
    expect(logs.data.logs.map((l) => l.action)).toEqual(['delete', 'update', 'create']);
    expect(logs.data.logs[1]!.changes).toEqual([
      expect.objectContaining({ alias: 'amount', before: '1', after: '2' }),
    ]);
    expect(logs.data.logs[2]!.changes.map((ch) => ch.alias)).toEqual(['name', 'amount']);
  });

  it('resolves relations and lists related rows', async () => {
    const companyRows = `/v3/app/worksheets/${companies.id}/rows`;
    const globex = await call<{ id: string }>('POST', companyRows, {
      fields: [{ id: 'name', value: 'Globex' }],
    });
    const missing = await call('POST', rows(), {
      fields: [
        { id: 'name', value: 'x' },
        { id: 'company', value: ['00000000-0000-4000-8000-000000000000'] },
      ],
    });
    expect(missing.error_code).toBe(10002);

    const contact = await call<{ id: string }>('POST', rows(), {
      fields: [
        { id: 'name', value: 'Ann' },
        { id: 'company', value: [globex.data.id] },
      ],
    });
    const got = await call<FieldsRow>('GET', `${rows()}/${contact.data.id}`);
    expect(value(got.data, 'company')).toEqual([{ sid: globex.data.id, name: 'Globex' }]);
    const related = await call<{ rows: FieldsRow[]; total: number }>(
      'GET',
      `${rows()}/${contact.data.id}/relations/company`,
    );
    expect(related.data.total).toBe(1);
    expect(related.data.rows[0]!.id).toBe(globex.data.id);
    expect((await call('GET', `${rows()}/${contact.data.id}/relations/name`)).error_code).toBe(10001);
    const byCompany = await call<{
      groups: Array<{ group: { company: { key: string; label: string } }; count: number }>;
    }>('POST', `${rows()}/pivot`, { groupBy: 'company' });
    expect(byCompany.data.groups).toEqual([
      { group: { company: { key: globex.data.id, label: 'Globex' } }, count: 1, values: [] },
    ]);
  });

  it('gives a stable share link and keeps discussions', async () => {
    const created = await call<{ id: string }>('POST', rows(), { fields: [{ id: 'name', value: 'Ann' }] });
    const link = await call<{ shareLink: string }>('POST', `${rows()}/${created.data.id}/share-link`, {});
    expect(link.data.shareLink.startsWith(`${emulator.url}/public/record/`)).toBe(true);
    expect(
      (await call<{ shareLink: string }>('POST', `${rows()}/${created.data.id}/share-link`, {})).data
        .shareLink,
    ).toBe(link.data.shareLink);

    await call('POST', `${rows()}/${created.data.id}/discussions`, { message: 'first' });
    await call('POST', `${rows()}/${created.data.id}/discussions`, { message: 'second' });
    const list = await call<{
      discussions: Array<{ message: string; createdBy: { fullname: string } }>;
      total: number;
    }>('GET', `${rows()}/${created.data.id}/discussions`);
    expect(list.data.total).toBe(2);
    expect(list.data.discussions.map((d) => d.message)).toEqual(['second', 'first']);
    expect(list.data.discussions[0]!.createdBy.fullname).toBe('Ada Admin');
  });

  it('pivots with count and sum grouped by a field', async () => {
    const open = optionKey('status', 'Open');
    const closed = optionKey('status', 'Closed');
    await call('POST', `${rows()}/batch`, {
      rows: [
        [open, 10],
        [open, 5],
        [closed, 2],
      ].map(([status, amount]) => ({
        fields: [
          { id: 'name', value: 'r' },
          { id: 'status', value: [status] },
          { id: 'amount', value: amount },
        ],
      })),
    });
    const res = await call<{
      groups: Array<{
        group: { status: { key: string; label: string } };
        count: number;
        values: Array<{ value: number }>;
      }>;
      total: number;
    }>('POST', `${rows()}/pivot`, {
      groupBy: 'status',
      values: [
        { field: 'amount', aggregation: 'sum' },
        { field: 'amount', aggregation: 'count' },
      ],
    });
    expect(res.data.total).toBe(3);
    expect(
      res.data.groups.map((g) => [g.group.status.label, g.count, g.values[0]!.value, g.values[1]!.value]),
    ).toEqual([
      ['Open', 2, 15, 2],
      ['Closed', 1, 2, 1],
    ]);
    const filtered = await call<{ total: number }>('POST', `${rows()}/pivot`, {
      groupBy: ['status'],
      filter: { type: 'condition', field: 'amount', operator: 'gt', value: 4 },
    });
    expect(filtered.data.total).toBe(2);
  });
});
