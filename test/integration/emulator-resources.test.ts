import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

interface Envelope<T> {
  success: boolean;
  error_code: number;
  error_msg: string;
  data: T;
}
type Obj = Record<string, unknown>;
type Named = { id: string; name: string };

let emulator: EmulatorHandle;
let headers: Record<string, string>;
let appId: string;

async function call<T = Obj>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Envelope<T>;
}

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'spec', maxOptionsPerField: 5 });
  const app = emulator.createApp({ name: 'Resources' });
  appId = app.appId;
  headers = { 'APP-Appkey': app.appKey, 'APP-Sign': app.sign };
});

afterAll(async () => {
  await emulator.close();
});

describe('emulator: user, org, application', () => {
  it('lists orgs and apps, reads and edits the app, adds sections and items', async () => {
    expect((await call<Named[]>('GET', '/v3/orgs/list')).data[0]!.name).toBe('Rowbridge Demo Org');
    expect((await call<Named[]>('GET', '/v3/apps/list')).data.map((a) => a.id)).toEqual([appId]);
    const edited = await call('POST', '/v3/app', { name: 'Renamed', color: '#000000' });
    expect(edited.data).toMatchObject({ id: appId, name: 'Renamed', color: '#000000' });

    const sections = await call<Named[]>('POST', '/v3/app/sections/batch', {
      sections: [{ name: 'Sales' }, { name: 'Ops' }],
    });
    expect(sections.data.map((s) => s.name)).toEqual(['Sales', 'Ops']);
    const items = await call<Array<Named & { type: string }>>('POST', '/v3/app/items/batch', {
      items: [
        { sectionId: sections.data[0]!.id, name: 'Leads', type: 'worksheet' },
        { sectionId: sections.data[0]!.id, name: 'Dashboard', type: 'customPage' },
      ],
    });
    expect(items.data.map((i) => i.type)).toEqual(['worksheet', 'customPage']);
    const app = await call<{ sections: Array<{ name: string; items: Named[] }> }>('GET', '/v3/app');
    expect(app.data.sections.find((s) => s.name === 'Sales')!.items.map((i) => i.name)).toEqual([
      'Leads',
      'Dashboard',
    ]);
    expect(
      (
        await call('POST', '/v3/app/items/batch', {
          items: [{ sectionId: 'nope', name: 'x', type: 'worksheet' }],
        })
      ).error_code,
    ).toBe(10001);

    const pageId = items.data[1]!.id;
    const replaced = await call('PUT', `/v3/app/custom-pages/${pageId}`, {
      name: 'Board',
      components: [{ type: 'chart' }],
    });
    expect(replaced.data).toMatchObject({ id: pageId, name: 'Board', components: [{ type: 'chart' }] });
    const again = await call('PUT', `/v3/app/custom-pages/${pageId}`, { name: 'Board 2' });
    expect(again.data['components']).toBeUndefined();
    expect(
      (await call('PUT', '/v3/app/custom-pages/000000000000000000000000', { name: 'x' })).error_code,
    ).toBe(10007);
  });

  it('answers 404 and 405 with the envelope, and serves a private deployment under /api', async () => {
    const missing = await fetch(`${emulator.url}/v3/app/nothing-here`, { headers });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Envelope<null>).error_code).toBe(10001);
    const wrong = await fetch(`${emulator.url}/v3/app`, { method: 'PUT', headers });
    expect(wrong.status).toBe(405);
    expect(((await wrong.json()) as Envelope<null>).error_msg).toContain('GET, POST, DELETE');
    const privateDeployment = await fetch(`${emulator.url}/api/v3/app`, { headers });
    expect(((await privateDeployment.json()) as Envelope<Obj>).data['id']).toBe(appId);
  });
});

describe('emulator: worksheets', () => {
  it('creates a worksheet with fields and options in the platform formats', async () => {
    const created = await call<WorksheetStructure & { worksheetId: string }>('POST', '/v3/app/worksheets', {
      name: 'Orders',
      alias: 'orders',
      sectionId: '',
      createDefaultView: true,
      fields: [
        { name: 'Number', alias: 'number', type: '2', required: true, isTitle: true },
        {
          name: 'State',
          alias: 'state',
          type: '11',
          options: [
            { value: 'New', index: 1 },
            { value: 'Paid', index: 2 },
          ],
          config: { isColorOptions: false },
        },
      ],
    });
    expect(created.success).toBe(true);
    expect(created.data.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.data.worksheetId).toBe(created.data.id);
    expect(created.data.fields.map((f) => [f.alias, f.type, f.id.length])).toEqual([
      ['number', '2', 24],
      ['state', '11', 24],
    ]);
    expect(created.data.fields[1]!.options!.map((o) => o.key)).toEqual([
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
    ]);
    expect(created.data.views).toHaveLength(1);

    const list = await call<Array<Named & { remark: string }>>('POST', '/v3/app/worksheets/list', {});
    expect(list.data.map((w) => w.name)).toContain('Orders');
    expect(list.data[0]).toHaveProperty('remark');
  });

  it('refuses bad definitions: unknown type, reserved alias (10001), too many options (100006)', async () => {
    const badType = await call('POST', '/v3/app/worksheets', {
      name: 'X',
      fields: [{ name: 'a', type: 'Spreadsheet' }],
    });
    expect(badType.error_code).toBe(10001);
    expect(badType.error_msg).toContain('fields[0].type');
    const reserved = await call('POST', '/v3/app/worksheets', {
      name: 'X',
      fields: [{ name: 'a', alias: 'rowid', type: 'Text' }],
    });
    expect(reserved.error_code).toBe(10001);
    const options = [1, 2, 3, 4, 5, 6].map((n) => ({ value: `o${n}`, index: n }));
    const tooMany = await call('POST', '/v3/app/worksheets', {
      name: 'X',
      fields: [{ name: 'a', type: 'Dropdown', options }],
    });
    expect(tooMany.error_code).toBe(100006);
  });

  it('updates the structure: add, edit, remove fields; unique needs distinct values; delete', async () => {
    const ws = emulator.createWorksheet(appId, {
      name: 'People',
      fields: [{ name: 'Name', alias: 'name', type: 'Text' }],
    });
    const rows = `/v3/app/worksheets/${ws.id}/rows`;
    await call('POST', `${rows}/batch`, {
      rows: [{ fields: [{ id: 'name', value: 'Same' }] }, { fields: [{ id: 'name', value: 'Same' }] }],
    });

    const added = await call<WorksheetStructure>('POST', `/v3/app/worksheets/${ws.id}/structure`, {
      name: 'Persons',
      addFields: [
        { name: 'Age', alias: 'age', type: 'Number' },
        { name: 'Kind', alias: 'kind', type: 'SingleSelect', options: [{ value: 'A', index: 1 }] },
      ],
    });
    expect(added.data.name).toBe('Persons');
    expect(added.data.fields.map((f) => f.alias)).toEqual(['name', 'age', 'kind']);

    const kind = added.data.fields[2]!;
    const edited = await call<WorksheetStructure>('POST', `/v3/app/worksheets/${ws.id}/structure`, {
      editFields: [
        {
          id: 'kind',
          options: [
            { key: kind.options![0]!.key, value: 'A+', index: 1 },
            { value: 'B', index: 2 },
          ],
        },
        { id: 'age', name: 'Age in years' },
      ],
      removeFields: ['name'],
    });
    expect(edited.data.fields.map((f) => f.name)).toEqual(['Age in years', 'Kind']);
    expect(edited.data.fields[1]!.options!.map((o) => [o.value, o.key === kind.options![0]!.key])).toEqual([
      ['A+', true],
      ['B', false],
    ]);

    await call('POST', `/v3/app/worksheets/${ws.id}/structure`, {
      addFields: [{ name: 'Name', alias: 'name2', type: 'Text' }],
    });
    await call('PATCH', `${rows}/batch`, {
      rowIds: emulator.state.rows(ws.id).map((r) => r.id),
      fields: [{ id: 'name2', value: 'dup' }],
    });
    const unique = await call('POST', `/v3/app/worksheets/${ws.id}/structure`, {
      editFields: [{ id: 'name2', isUnique: true }],
    });
    expect(unique.error_code).toBe(100005);
    expect(emulator.state.worksheet(ws.id)!.fields.find((f) => f.alias === 'name2')!.isUnique).toBe(false);

    expect((await call('DELETE', `/v3/app/worksheets/${ws.id}`)).success).toBe(true);
    expect((await call('GET', `/v3/app/worksheets/${ws.id}`)).error_code).toBe(430022);
  });

  it('writes field types as names when typeFormat is "name"', async () => {
    const ws = emulator.createWorksheet(appId, {
      name: 'Typed',
      fields: [
        { name: 'N', type: '2' },
        { name: 'S', type: '11' },
      ],
    });
    emulator.setOptions({ typeFormat: 'name' });
    try {
      const structure = await call<WorksheetStructure>('GET', `/v3/app/worksheets/${ws.id}`);
      expect(structure.data.fields.map((f) => f.type)).toEqual(['Text', 'Dropdown']);
    } finally {
      emulator.setOptions({ typeFormat: 'code' });
    }
  });

  it('refuses a worksheet of another application with 430013', async () => {
    const other = emulator.createApp({ name: 'Other' });
    const foreign = emulator.createWorksheet(other.appId, {
      name: 'Foreign',
      fields: [{ name: 'N', type: 'Text' }],
    });
    expect((await call('GET', `/v3/app/worksheets/${foreign.id}`)).error_code).toBe(430013);
  });

  it('creates views and charts', async () => {
    const ws = emulator.createWorksheet(appId, {
      name: 'Charts',
      fields: [{ name: 'N', type: 'Text' }],
      createDefaultView: false,
    });
    const views = await call<Array<Named & { type: string }>>(
      'POST',
      `/v3/app/worksheets/${ws.id}/views/batch`,
      { views: [{ name: 'Board', type: 'board' }] },
    );
    expect(views.data[0]).toMatchObject({ name: 'Board', type: 'board' });
    expect(emulator.state.worksheet(ws.id)!.views).toEqual([
      { id: views.data[0]!.id, name: 'Board', type: 'board' },
    ]);
    const chart = await call<{ id: string }>('POST', `/v3/app/worksheets/${ws.id}/charts`, {
      name: 'By state',
      type: 'pie',
    });
    expect((await call('GET', `/v3/app/worksheets/${ws.id}/charts/${chart.data.id}`)).data).toMatchObject({
      name: 'By state',
      type: 'pie',
    });
    expect((await call<Named[]>('GET', `/v3/app/worksheets/${ws.id}/charts`)).data).toHaveLength(1);
    await call('DELETE', `/v3/app/worksheets/${ws.id}/charts/${chart.data.id}`);
    expect((await call('GET', `/v3/app/worksheets/${ws.id}/charts/${chart.data.id}`)).error_code).toBe(10007);
  });
});

describe('emulator: workflows and to-dos', () => {
  it('builds, validates, publishes and triggers a workflow; the to-do can be approved once', async () => {
    const wf = await call<{ id: string }>('POST', '/v3/app/workflows', { name: 'Expense approval' });
    const invalid = await call<{ isValid: boolean; errors: string[] }>(
      'POST',
      `/v3/app/workflows/${wf.data.id}/validate`,
      {},
    );
    expect(invalid.data.isValid).toBe(false);
    expect((await call('POST', `/v3/app/workflows/${wf.data.id}/publish`, {})).error_code).toBe(10001);

    const ben = 'a0000000-0000-4000-8000-000000000002';
    const nodes = await call<Array<Named & { type: string }>>(
      'POST',
      `/v3/app/workflows/${wf.data.id}/nodes/batch`,
      {
        nodes: [
          { name: 'Start', type: 'start' },
          {
            name: 'Boss',
            type: 'approval',
            config: { approvers: ['a0000000-0000-4000-8000-000000000001', ben] },
          },
          { name: 'Extra', type: 'notice' },
        ],
      },
    );
    expect(nodes.data.map((n) => n.type)).toEqual(['start', 'approval', 'notice']);
    await call('DELETE', `/v3/app/workflows/${wf.data.id}/nodes/${nodes.data[2]!.id}`);
    expect(
      (await call<{ nodes: Named[] }>('GET', `/v3/app/workflows/${wf.data.id}`)).data.nodes,
    ).toHaveLength(2);
    expect(
      (await call<{ isValid: boolean }>('POST', `/v3/app/workflows/${wf.data.id}/validate`, {})).data.isValid,
    ).toBe(true);

    const published = await call<{ processId: string }>(
      'POST',
      `/v3/app/workflows/${wf.data.id}/publish`,
      {},
    );
    const processes = await call<Array<Named & { workflowId: string }>>('GET', '/v3/app/workflow/processes');
    expect(processes.data.map((p) => p.name)).toEqual(['Purchase approval', 'Expense approval']);
    expect(
      (await call('GET', `/v3/app/workflow/processes/${published.data.processId}`)).data['workflowId'],
    ).toBe(wf.data.id);

    const first = await call<{ instanceId: string }>(
      'POST',
      `/v3/app/workflow/hooks/${published.data.processId}`,
      { amount: 42 },
    );
    const second = await call<{ instanceId: string }>(
      'POST',
      `/v3/app/workflow/hooks/${published.data.processId}`,
      { amount: 7 },
    );
    const todos = await call<Array<{ id: string; status: string }>>('GET', '/v3/app/workflow/instance/list');
    expect(todos.data.map((t) => t.id)).toEqual(
      expect.arrayContaining([first.data.instanceId, second.data.instanceId]),
    );
    expect((await call('GET', `/v3/app/workflow/instance/${first.data.instanceId}`)).data).toMatchObject({
      status: 'pending',
      payload: { amount: 42 },
    });

    const approved = await call<{ successfulIds: string[]; failedIds: string[] }>(
      'POST',
      '/v3/app/workflow/instance/batch',
      {
        instanceIds: [first.data.instanceId, '000000000000000000000000'],
        opinion: 'ok',
      },
    );
    expect(approved.data).toEqual({
      successfulIds: [first.data.instanceId],
      failedIds: ['000000000000000000000000'],
    });
    expect(
      (await call('POST', `/v3/app/workflow/instance/${first.data.instanceId}/revoke`, {})).error_code,
    ).toBe(430021);

    const urged = await call<{ urgeCount: number }>(
      'POST',
      `/v3/app/workflow/instance/${second.data.instanceId}/urge`,
      {},
    );
    expect(urged.data.urgeCount).toBe(1);
    expect(
      (
        await call<{ status: string }>(
          'POST',
          `/v3/app/workflow/instance/${second.data.instanceId}/return`,
          {},
        )
      ).data.status,
    ).toBe('returned');
    const third = await call<{ instanceId: string }>(
      'POST',
      `/v3/app/workflow/hooks/${published.data.processId}`,
      {},
    );
    expect(
      (
        await call<{ status: string }>(
          'POST',
          `/v3/app/workflow/instance/${third.data.instanceId}/terminate`,
          {},
        )
      ).data.status,
    ).toBe('terminated');
    const fourth = await call<{ instanceId: string }>(
      'POST',
      `/v3/app/workflow/hooks/${published.data.processId}`,
      {},
    );
    expect(
      (
        await call<{ status: string }>(
          'POST',
          `/v3/app/workflow/instance/${fourth.data.instanceId}/revoke`,
          {},
        )
      ).data.status,
    ).toBe('revoked');

    await call('DELETE', `/v3/app/workflows/${wf.data.id}`);
    expect((await call('GET', `/v3/app/workflows/${wf.data.id}`)).error_code).toBe(10007);
    expect((await call('POST', `/v3/app/workflow/hooks/${published.data.processId}`, {})).error_code).toBe(
      10007,
    );
  });
});

describe('emulator: roles, chatbots, knowledge, option sets, lookups', () => {
  it('creates, reads, lists and deletes roles and their members', async () => {
    expect((await call<Named[]>('GET', '/v3/app/roles')).data.map((r) => r.name)).toEqual([
      'Administrators',
      'Members',
    ]);
    const role = await call<{ id: string }>('POST', '/v3/app/roles', {
      name: 'Auditors',
      description: 'read only',
    });
    expect((await call('POST', '/v3/app/roles', { name: 'Auditors' })).error_code).toBe(10006);
    const ben = 'a0000000-0000-4000-8000-000000000002';
    const cy = 'a0000000-0000-4000-8000-000000000003';
    const added = await call<{ members: Array<{ fullname: string }> }>(
      'POST',
      `/v3/app/roles/${role.data.id}/members`,
      { userIds: [ben, cy] },
    );
    expect(added.data.members.map((m) => m.fullname)).toEqual(['Ben Sales', 'Cy Engineer']);
    expect(
      (await call('POST', `/v3/app/roles/${role.data.id}/members`, { userIds: ['nobody'] })).error_code,
    ).toBe(10002);
    await call('DELETE', `/v3/app/roles/${role.data.id}/members`, { userIds: [cy] });
    await call('DELETE', `/v3/app/roles/users/${ben}`);
    expect((await call<{ members: unknown[] }>('GET', `/v3/app/roles/${role.data.id}`)).data.members).toEqual(
      [],
    );
    await call('DELETE', `/v3/app/roles/${role.data.id}`);
    expect((await call('GET', `/v3/app/roles/${role.data.id}`)).error_code).toBe(10007);
  });

  it('creates, reads, lists and deletes chatbots and knowledge bases; searches knowledge', async () => {
    const kb = await call<{ id: string }>('POST', '/v3/app/knowledge', {
      name: 'FAQ',
      documents: [{ name: 'refunds.md', content: 'Refunds take five days.' }],
    });
    const bot = await call<{ id: string }>('POST', '/v3/app/chatbots', {
      name: 'Helper',
      knowledgeBaseIds: [kb.data.id],
    });
    expect((await call('GET', `/v3/app/chatbots/${bot.data.id}`)).data).toMatchObject({
      name: 'Helper',
      knowledgeBaseIds: [kb.data.id],
    });
    expect((await call<Named[]>('GET', '/v3/app/chatbots')).data).toHaveLength(1);
    await call('DELETE', `/v3/app/chatbots/${bot.data.id}`);
    expect((await call('GET', `/v3/app/chatbots/${bot.data.id}`)).error_code).toBe(10007);

    const bases = await call<Array<Named & { documentCount: number }>>('POST', '/v3/app/knowledge/list', {});
    expect(bases.data.map((b) => [b.name, b.documentCount])).toEqual([
      ['Product handbook', 2],
      ['FAQ', 1],
    ]);
    const hits = await call<Array<{ documentName: string; score: number }>>(
      'POST',
      '/v3/app/knowledge/search',
      { query: 'how long do refunds take' },
    );
    expect(hits.data[0]!.documentName).toBe('refunds.md');
    await call('DELETE', `/v3/app/knowledge/${kb.data.id}`);
    expect((await call('GET', `/v3/app/knowledge/${kb.data.id}`)).error_code).toBe(10007);
  });

  it('creates, replaces, lists and deactivates option sets', async () => {
    const created = await call<{ id: string }>('POST', '/v3/app/optionsets', {
      name: 'Sizes',
      options: [{ value: 'S' }, { value: 'M' }],
    });
    const replaced = await call<{ name: string; options: Array<{ value: string }> }>(
      'PUT',
      `/v3/app/optionsets/${created.data.id}`,
      {
        name: 'Shirt sizes',
        options: [{ value: 'L' }],
      },
    );
    expect(replaced.data.name).toBe('Shirt sizes');
    expect(replaced.data.options.map((o) => o.value)).toEqual(['L']);
    expect((await call<Named[]>('GET', '/v3/app/optionsets')).data.map((s) => s.name)).toEqual([
      'Priority',
      'Shirt sizes',
    ]);
    await call('DELETE', `/v3/app/optionsets/${created.data.id}`);
    expect((await call<Named[]>('GET', '/v3/app/optionsets')).data.map((s) => s.name)).toEqual(['Priority']);
    const six = [1, 2, 3, 4, 5, 6].map((n) => ({ value: `v${n}` }));
    expect((await call('POST', '/v3/app/optionsets', { name: 'Big', options: six })).error_code).toBe(100006);
  });

  it('looks up departments, regions and members, and manages members and departments', async () => {
    const depts = await call<Array<{ departmentId: string; departmentName: string }>>(
      'GET',
      '/v3/departments/lookup?keywords=sales',
    );
    expect(depts.data.map((d) => d.departmentName)).toEqual(['Sales', 'Sales North']);
    const regions = await call<Array<{ code: string; name: string }>>(
      'GET',
      '/v3/regions/lookup?parentCode=440000',
    );
    expect(regions.data.map((r) => r.name)).toEqual(['Guangzhou', 'Shenzhen']);
    const dept = await call<{ departmentId: string }>('POST', '/v3/departments', {
      name: 'Support',
      parentId: depts.data[0]!.departmentId,
    });
    const user = await call<{ accountId: string }>('POST', '/v3/users', {
      fullname: 'Dee Support',
      email: 'dee@example.com',
      departmentIds: [dept.data.departmentId],
    });
    const found = await call<Array<{ accountId: string; fullname: string }>>(
      'GET',
      `/v3/users/lookup?departmentId=${dept.data.departmentId}`,
    );
    expect(found.data).toEqual([
      expect.objectContaining({ accountId: user.data.accountId, fullname: 'Dee Support' }),
    ]);
    expect((await call('POST', '/v3/users', { fullname: 'Dup', email: 'dee@example.com' })).error_code).toBe(
      10006,
    );
    await call('DELETE', `/v3/users/${user.data.accountId}`);
    await call('DELETE', `/v3/departments/${dept.data.departmentId}`);
    expect((await call<unknown[]>('GET', '/v3/users/lookup?keywords=dee')).data).toEqual([]);
    expect((await call<unknown[]>('GET', '/v3/departments/lookup?keywords=support')).data).toEqual([]);
  });
});
