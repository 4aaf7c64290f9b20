import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Credentials } from '../../src/api/auth.ts';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { ApiError } from '../../src/ground/errors.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import { envelope, startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';

/**
 * Every endpoint of spec §4, called through createPlatformClient against a real HTTP
 * server: the request that arrives (method, encoded path, query, JSON body, credential
 * headers) and the `data` handed back. Ids contain characters that must be encoded, and
 * the expected paths spell the encoding out rather than computing it.
 */

const WS = 'ws/1 a';
const WS_E = 'ws%2F1%20a';
const ROW = 'row?#1';
const ROW_E = 'row%3F%231';
const FIELD = 'rel/field';
const FIELD_E = 'rel%2Ffield';
const ID = 'id ä/1';
const ID_E = 'id%20%C3%A4%2F1';
const NODE = 'node&2';
const NODE_E = 'node%262';
const fields = [{ id: 'title', value: 'Hello' }];
const filter = { type: 'condition' as const, field: 'status', operator: 'in' as const, value: ['k1'] };

interface EndpointCase {
  /** `group.method` of the client. */
  endpoint: string;
  /** Tells apart two cases of one endpoint. */
  label?: string;
  invoke: (c: PlatformClient) => Promise<unknown>;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  /** The JSON body expected; absent means no body at all. */
  body?: unknown;
  write: boolean;
  /** `data` the server answers; absent: an echo of the request line. */
  data?: unknown;
  /** What the method resolves to; absent: `data` as served. */
  result?: unknown;
}

const rowsBase = `/v3/app/worksheets/${WS_E}/rows`;
const rowPath = `${rowsBase}/${ROW_E}`;

const CASES: EndpointCase[] = [
  {
    endpoint: 'users.listOrgs',
    invoke: (c) => c.users.listOrgs(),
    method: 'GET',
    path: '/v3/orgs/list',
    write: false,
  },
  { endpoint: 'users.me', invoke: (c) => c.users.me(), method: 'GET', path: '/v3/users/me', write: false },

  { endpoint: 'apps.list', invoke: (c) => c.apps.list(), method: 'GET', path: '/v3/apps/list', write: false },
  {
    endpoint: 'apps.create',
    invoke: (c) => c.apps.create({ name: 'CRM' }),
    method: 'POST',
    path: '/v3/apps',
    body: { name: 'CRM' },
    write: true,
  },
  {
    endpoint: 'apps.get',
    invoke: (c) => c.apps.get(),
    method: 'GET',
    path: '/v3/app',
    write: false,
    data: { appId: 'app-1', name: 'CRM', sections: [{ sectionId: 's1', name: 'S', items: [] }] },
    result: {
      appId: 'app-1',
      organizationId: undefined,
      name: 'CRM',
      sections: [{ id: 's1', name: 'S', items: [], childSections: [] }],
    },
  },
  {
    endpoint: 'apps.createSections',
    invoke: (c) => c.apps.createSections({ sections: [{ name: 'S' }] }),
    method: 'POST',
    path: '/v3/app/sections/batch',
    body: { sections: [{ name: 'S' }] },
    write: true,
  },
  {
    endpoint: 'apps.createItems',
    invoke: (c) => c.apps.createItems({ items: [{ name: 'I' }] }),
    method: 'POST',
    path: '/v3/app/items/batch',
    body: { items: [{ name: 'I' }] },
    write: true,
  },
  {
    endpoint: 'apps.edit',
    invoke: (c) => c.apps.edit({ name: 'CRM 2' }),
    method: 'POST',
    path: '/v3/app',
    body: { name: 'CRM 2' },
    write: true,
  },
  { endpoint: 'apps.delete', invoke: (c) => c.apps.delete(), method: 'DELETE', path: '/v3/app', write: true },

  {
    endpoint: 'worksheets.list',
    label: 'without body',
    invoke: (c) => c.worksheets.list(),
    method: 'POST',
    path: '/v3/app/worksheets/list',
    body: {},
    write: false,
    data: [{ id: 'w1', name: 'Orders', remark: '' }],
  },
  {
    endpoint: 'worksheets.list',
    label: 'with body',
    invoke: (c) => c.worksheets.list({ responseFormat: 'json' }),
    method: 'POST',
    path: '/v3/app/worksheets/list',
    body: { responseFormat: 'json' },
    write: false,
    data: [],
  },
  {
    endpoint: 'worksheets.create',
    invoke: (c) =>
      c.worksheets.create({
        name: 'Orders',
        sectionId: '',
        fields: [{ name: 'Title', type: '2', isTitle: true }],
      }),
    method: 'POST',
    path: '/v3/app/worksheets',
    body: { name: 'Orders', sectionId: '', fields: [{ name: 'Title', type: '2', isTitle: true }] },
    write: true,
    data: { worksheetId: 'ws-new' },
    result: { id: 'ws-new' },
  },
  {
    endpoint: 'worksheets.get',
    invoke: (c) => c.worksheets.get(WS),
    method: 'GET',
    path: `/v3/app/worksheets/${WS_E}`,
    query: { responseFormat: 'json' },
    write: false,
    data: { worksheetId: WS, name: 'Orders', fields: [] },
    result: { id: WS, name: 'Orders', fields: [] },
  },
  {
    endpoint: 'worksheets.updateStructure',
    invoke: (c) => c.worksheets.updateStructure(WS, { addFields: [] }),
    method: 'POST',
    path: `/v3/app/worksheets/${WS_E}`,
    body: { addFields: [] },
    write: true,
  },
  {
    endpoint: 'worksheets.delete',
    invoke: (c) => c.worksheets.delete(WS),
    method: 'DELETE',
    path: `/v3/app/worksheets/${WS_E}`,
    write: true,
  },

  {
    endpoint: 'rows.list',
    invoke: (c) =>
      c.rows.list(WS, { pageSize: 50, pageIndex: 2, filter, sorts: [{ field: 'ctime', isAsc: true }] }),
    method: 'POST',
    path: `${rowsBase}/list`,
    body: {
      pageSize: 50,
      pageIndex: 2,
      filter,
      sorts: [{ field: 'ctime', isAsc: true }],
      useFieldIdAsKey: true,
    },
    write: false,
    data: { rows: [{ id: 'r1', title: 'x' }], total: '51' },
    result: { rows: [{ id: 'r1', title: 'x' }], total: 51 },
  },
  {
    endpoint: 'rows.get',
    invoke: (c) => c.rows.get(WS, ROW, { includeSystemFields: true, responseFormat: 'md' }),
    method: 'GET',
    path: rowPath,
    query: { includeSystemFields: 'true', responseFormat: 'md' },
    write: false,
    data: { id: 'r1', title: 'x' },
  },
  {
    endpoint: 'rows.create',
    invoke: (c) => c.rows.create(WS, { fields }),
    method: 'POST',
    path: rowsBase,
    body: { fields, triggerWorkflow: true },
    write: true,
    data: { id: 'r-new' },
  },
  {
    endpoint: 'rows.update',
    invoke: (c) => c.rows.update(WS, ROW, { fields, triggerWorkflow: false }),
    method: 'PATCH',
    path: rowPath,
    body: { fields, triggerWorkflow: false },
    write: true,
    data: undefined,
    result: { id: ROW },
  },
  {
    endpoint: 'rows.delete',
    invoke: (c) => c.rows.delete(WS, ROW, { permanent: true }),
    method: 'DELETE',
    path: rowPath,
    body: { permanent: true, triggerWorkflow: true },
    write: true,
    data: {},
    result: undefined,
  },
  {
    endpoint: 'rows.batchCreate',
    invoke: (c) => c.rows.batchCreate(WS, { rows: [{ fields }] }),
    method: 'POST',
    path: `${rowsBase}/batch`,
    body: { rows: [{ fields }], triggerWorkflow: false },
    write: true,
    data: { rowIds: ['r-new'] },
  },
  {
    endpoint: 'rows.batchUpdate',
    invoke: (c) => c.rows.batchUpdate(WS, { rowIds: ['r1', 'r2'], fields }),
    method: 'PATCH',
    path: `${rowsBase}/batch`,
    body: { rowIds: ['r1', 'r2'], fields, triggerWorkflow: false },
    write: true,
    data: { succeededRowIds: ['r1'], failedRowIds: ['r2'] },
    result: { successfulRowIds: ['r1'], failedRowIds: ['r2'] },
  },
  {
    endpoint: 'rows.batchDelete',
    invoke: (c) => c.rows.batchDelete(WS, { rowIds: ['r1'], permanent: true }),
    method: 'DELETE',
    path: `${rowsBase}/batch`,
    body: { rowIds: ['r1'], permanent: true, triggerWorkflow: false },
    write: true,
    data: {},
    result: undefined,
  },
  {
    endpoint: 'rows.relations',
    invoke: (c) =>
      c.rows.relations(WS, ROW, FIELD, { pageSize: 20, pageIndex: 1, isReturnSystemFields: true }),
    method: 'GET',
    path: `${rowPath}/relations/${FIELD_E}`,
    query: { pageSize: '20', pageIndex: '1', isReturnSystemFields: 'true' },
    write: false,
    data: { rows: [], total: 0 },
  },
  {
    endpoint: 'rows.pivot',
    invoke: (c) =>
      c.rows.pivot(WS, {
        values: [{ field: 'record_count', aggregation: 'COUNT' }],
        rows: [{ field: 'status' }],
      }),
    method: 'POST',
    path: `${rowsBase}/pivot`,
    body: { values: [{ field: 'record_count', aggregation: 'COUNT' }], rows: [{ field: 'status' }] },
    write: false,
    data: {
      meta: {},
      pivot: [{ columns: {}, rows: { status: 'Open' }, values: { record_count: 3 } }],
      totalPages: 1,
    },
    result: {
      meta: {},
      pivot: [{ columns: {}, rows: { status: 'Open' }, values: { record_count: 3 } }],
      summary: undefined,
      totalPages: 1,
      currentPage: undefined,
    },
  },
  {
    endpoint: 'rows.shareLink',
    invoke: (c) => c.rows.shareLink(WS, ROW),
    method: 'POST',
    path: `${rowPath}/share-link`,
    body: {},
    write: false,
  },
  {
    endpoint: 'rows.logs',
    invoke: (c) => c.rows.logs(WS, ROW, { pageSize: 10, pageIndex: undefined }),
    method: 'GET',
    path: `${rowPath}/logs`,
    query: { pageSize: '10' },
    write: false,
  },
  {
    endpoint: 'rows.discussions',
    invoke: (c) => c.rows.discussions(WS, ROW),
    method: 'GET',
    path: `${rowPath}/discussions`,
    write: false,
  },

  {
    endpoint: 'views.createViews',
    invoke: (c) => c.views.createViews(WS, { views: [{ name: 'All' }] }),
    method: 'POST',
    path: `/v3/app/worksheets/${WS_E}/views/batch`,
    body: { views: [{ name: 'All' }] },
    write: true,
  },
  {
    endpoint: 'views.createChart',
    invoke: (c) => c.views.createChart(WS, { name: 'By status' }),
    method: 'POST',
    path: `/v3/app/worksheets/${WS_E}/charts`,
    body: { name: 'By status' },
    write: true,
  },
  {
    endpoint: 'views.updateCustomPage',
    invoke: (c) => c.views.updateCustomPage(ID, { components: [] }),
    method: 'PUT',
    path: `/v3/app/custom-pages/${ID_E}`,
    body: { components: [] },
    write: true,
  },

  {
    endpoint: 'workflows.listProcesses',
    invoke: (c) => c.workflows.listProcesses(),
    method: 'GET',
    path: '/v3/app/workflow/processes',
    write: false,
  },
  {
    endpoint: 'workflows.getProcess',
    invoke: (c) => c.workflows.getProcess(ID),
    method: 'GET',
    path: `/v3/app/workflow/processes/${ID_E}`,
    write: false,
  },
  {
    endpoint: 'workflows.triggerProcess',
    invoke: (c) => c.workflows.triggerProcess(ID, { amount: 3 }),
    method: 'POST',
    path: `/v3/app/workflow/hooks/${ID_E}`,
    body: { amount: 3 },
    write: true,
  },
  {
    endpoint: 'workflows.create',
    invoke: (c) => c.workflows.create({ name: 'Approve' }),
    method: 'POST',
    path: '/v3/app/workflows',
    body: { name: 'Approve' },
    write: true,
  },
  {
    endpoint: 'workflows.createNodes',
    invoke: (c) => c.workflows.createNodes(ID, { nodes: [{ type: 'approve' }] }),
    method: 'POST',
    path: `/v3/app/workflows/${ID_E}/nodes/batch`,
    body: { nodes: [{ type: 'approve' }] },
    write: true,
  },
  {
    endpoint: 'workflows.deleteNode',
    invoke: (c) => c.workflows.deleteNode(ID, NODE),
    method: 'DELETE',
    path: `/v3/app/workflows/${ID_E}/nodes/${NODE_E}`,
    write: true,
  },
  {
    endpoint: 'workflows.delete',
    invoke: (c) => c.workflows.delete(ID),
    method: 'DELETE',
    path: `/v3/app/workflows/${ID_E}`,
    write: true,
  },
  {
    endpoint: 'workflows.get',
    invoke: (c) => c.workflows.get(ID),
    method: 'GET',
    path: `/v3/app/workflows/${ID_E}`,
    write: false,
  },
  {
    endpoint: 'workflows.validate',
    invoke: (c) => c.workflows.validate(ID),
    method: 'POST',
    path: `/v3/app/workflows/${ID_E}/validate`,
    body: {},
    write: false,
  },
  {
    endpoint: 'workflows.publish',
    invoke: (c) => c.workflows.publish(ID),
    method: 'POST',
    path: `/v3/app/workflows/${ID_E}/publish`,
    body: {},
    write: true,
  },

  {
    endpoint: 'todos.list',
    invoke: (c) => c.todos.list({ pageIndex: 1, type: 'approve' }),
    method: 'GET',
    path: '/v3/app/workflow/instance/list',
    query: { pageIndex: '1', type: 'approve' },
    write: false,
  },
  {
    endpoint: 'todos.get',
    invoke: (c) => c.todos.get(ID),
    method: 'GET',
    path: `/v3/app/workflow/instance/${ID_E}`,
    write: false,
  },
  {
    endpoint: 'todos.approve',
    invoke: (c) => c.todos.approve({ instanceIds: ['i1'], opinion: 'ok' }),
    method: 'POST',
    path: '/v3/app/workflow/instance/batch',
    body: { instanceIds: ['i1'], opinion: 'ok' },
    write: true,
  },
  {
    endpoint: 'todos.revoke',
    invoke: (c) => c.todos.revoke(ID),
    method: 'POST',
    path: `/v3/app/workflow/instance/${ID_E}/revoke`,
    body: {},
    write: true,
  },
  {
    endpoint: 'todos.return',
    invoke: (c) => c.todos.return(ID, { opinion: 'fix the amount' }),
    method: 'POST',
    path: `/v3/app/workflow/instance/${ID_E}/return`,
    body: { opinion: 'fix the amount' },
    write: true,
  },
  {
    endpoint: 'todos.terminate',
    invoke: (c) => c.todos.terminate(ID, { reason: 'duplicate' }),
    method: 'POST',
    path: `/v3/app/workflow/instance/${ID_E}/terminate`,
    body: { reason: 'duplicate' },
    write: true,
  },
  {
    endpoint: 'todos.urge',
    invoke: (c) => c.todos.urge(ID),
    method: 'POST',
    path: `/v3/app/workflow/instance/${ID_E}/urge`,
    body: {},
    write: true,
  },

  {
    endpoint: 'chatbots.create',
    invoke: (c) => c.chatbots.create({ name: 'Helper' }),
    method: 'POST',
    path: '/v3/app/chatbots',
    body: { name: 'Helper' },
    write: true,
  },

  {
    endpoint: 'roles.list',
    invoke: (c) => c.roles.list(),
    method: 'GET',
    path: '/v3/app/roles',
    write: false,
  },
  {
    endpoint: 'roles.create',
    invoke: (c) => c.roles.create({ name: 'Sales' }),
    method: 'POST',
    path: '/v3/app/roles',
    body: { name: 'Sales' },
    write: true,
  },
  {
    endpoint: 'roles.get',
    invoke: (c) => c.roles.get(ID),
    method: 'GET',
    path: `/v3/app/roles/${ID_E}`,
    write: false,
  },
  {
    endpoint: 'roles.delete',
    invoke: (c) => c.roles.delete(ID),
    method: 'DELETE',
    path: `/v3/app/roles/${ID_E}`,
    write: true,
  },
  {
    endpoint: 'roles.addMembers',
    invoke: (c) => c.roles.addMembers(ID, { userIds: ['u1'] }),
    method: 'POST',
    path: `/v3/app/roles/${ID_E}/members`,
    body: { userIds: ['u1'] },
    write: true,
  },
  {
    endpoint: 'roles.removeMembers',
    invoke: (c) => c.roles.removeMembers(ID, { userIds: ['u1'] }),
    method: 'DELETE',
    path: `/v3/app/roles/${ID_E}/members`,
    body: { userIds: ['u1'] },
    write: true,
  },
  {
    endpoint: 'roles.removeUserFromAll',
    invoke: (c) => c.roles.removeUserFromAll(ID),
    method: 'DELETE',
    path: `/v3/app/roles/users/${ID_E}`,
    write: true,
  },

  {
    endpoint: 'knowledge.list',
    invoke: (c) => c.knowledge.list(),
    method: 'POST',
    path: '/v3/app/knowledge/list',
    body: {},
    write: false,
  },
  {
    endpoint: 'knowledge.search',
    invoke: (c) => c.knowledge.search({ query: 'refund policy' }),
    method: 'POST',
    path: '/v3/app/knowledge/search',
    body: { query: 'refund policy' },
    write: false,
  },

  {
    endpoint: 'lookups.departments',
    invoke: (c) => c.lookups.departments({ orgId: 'org-1', name: 'Sales' }),
    method: 'GET',
    path: '/v3/departments/lookup',
    query: { orgId: 'org-1', name: 'Sales' },
    write: false,
    data: { departments: [{ id: 'd1', name: 'Sales' }] },
    result: [{ id: 'd1', name: 'Sales' }],
  },
  {
    endpoint: 'lookups.regions',
    invoke: (c) => c.lookups.regions({ id: '310000' }),
    method: 'GET',
    path: '/v3/regions',
    query: { id: '310000' },
    write: false,
    data: {
      regions: [{ id: '310101', name: 'Huangpu', path: 'Shanghai/Huangpu', last: true }],
      currentRegion: {},
    },
    result: [{ id: '310101', name: 'Huangpu', path: 'Shanghai/Huangpu', last: true }],
  },
  {
    endpoint: 'lookups.users',
    invoke: (c) => c.lookups.users({ orgId: 'org-1', name: 'Ada' }),
    method: 'GET',
    path: '/v3/users/lookup',
    query: { orgId: 'org-1', name: 'Ada' },
    write: false,
    data: { users: [{ id: 'u1', name: 'Ada' }] },
    result: [{ accountId: 'u1', fullname: 'Ada', departments: [] }],
  },

  {
    endpoint: 'optionsets.list',
    invoke: (c) => c.optionsets.list(),
    method: 'GET',
    path: '/v3/app/optionsets',
    write: false,
  },
  {
    endpoint: 'optionsets.create',
    invoke: (c) => c.optionsets.create({ name: 'Colours' }),
    method: 'POST',
    path: '/v3/app/optionsets',
    body: { name: 'Colours' },
    write: true,
  },
  {
    endpoint: 'optionsets.update',
    invoke: (c) => c.optionsets.update(ID, { options: [] }),
    method: 'PUT',
    path: `/v3/app/optionsets/${ID_E}`,
    body: { options: [] },
    write: true,
  },
  {
    endpoint: 'optionsets.delete',
    invoke: (c) => c.optionsets.delete(ID),
    method: 'DELETE',
    path: `/v3/app/optionsets/${ID_E}`,
    write: true,
  },
];

const RESOURCE_GROUPS = [
  'users',
  'apps',
  'worksheets',
  'rows',
  'views',
  'workflows',
  'todos',
  'chatbots',
  'roles',
  'knowledge',
  'lookups',
  'optionsets',
] as const;

interface AuthCase {
  name: string;
  credentials: Credentials;
  headerPrefix?: string;
  /** Headers that must arrive, lower-case names. */
  expected: Record<string, string>;
  /** Headers that must not arrive. */
  absent: string[];
}

const AUTH_CASES: AuthCase[] = [
  {
    name: 'app key + sign',
    credentials: { kind: 'appkey', appKey: 'key-1', sign: 'sign-secret' },
    expected: { 'hap-appkey': 'key-1', 'hap-sign': 'sign-secret' },
    absent: ['authorization', 'hap-appid'],
  },
  {
    name: 'personal token with app id',
    credentials: { kind: 'token', token: 'tok-123', appId: 'app-9' },
    expected: { authorization: 'Bearer tok-123', 'hap-appid': 'app-9' },
    absent: ['hap-appkey', 'hap-sign'],
  },
  {
    name: 'app key under the X-HAP- prefix',
    credentials: { kind: 'appkey', appKey: 'key-2', sign: 'sign-2' },
    headerPrefix: 'X-HAP-',
    expected: { 'x-hap-appkey': 'key-2', 'x-hap-sign': 'sign-2' },
    absent: ['hap-appkey', 'hap-sign', 'authorization'],
  },
  {
    name: 'token under the X-HAP- prefix',
    credentials: { kind: 'token', token: 'tok-456', appId: 'app-7' },
    headerPrefix: 'X-HAP-',
    expected: { authorization: 'Bearer tok-456', 'x-hap-appid': 'app-7' },
    absent: ['hap-appid', 'x-hap-appkey'],
  },
];

function caseName(c: EndpointCase): string {
  return c.label === undefined ? `${c.endpoint} → ${c.method} ${c.path}` : `${c.endpoint} (${c.label})`;
}

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(async () => {
  await server.close();
});

/** A client whose limiter does not slow the table down (pacing is the limiter's own test). */
function clientFor(auth: AuthCase, budgetKey: string): { client: PlatformClient; limiter: RateLimiter } {
  const limiter = createRateLimiter({
    budgetKey,
    initialRatePerSec: 1000,
    maxRatePerSec: 1000,
    burstMs: 1000,
  });
  const client = createPlatformClient({
    baseUrl: server.url,
    credentials: auth.credentials,
    ...(auth.headerPrefix === undefined ? {} : { headerPrefix: auth.headerPrefix }),
    retry: { retries: 0, unknownRetries: 0 },
    limiter,
  });
  return { client, limiter };
}

describe('resource methods', () => {
  it('the table covers every method of every resource group', () => {
    const { client } = clientFor(AUTH_CASES[0]!, 'test:api-resources:coverage');
    const methods = RESOURCE_GROUPS.flatMap((group) =>
      Object.entries(client[group])
        .filter(([, value]) => typeof value === 'function')
        .map(([name]) => `${group}.${name}`),
    );
    expect(new Set(CASES.map((c) => c.endpoint))).toEqual(new Set(methods));
    expect(methods).toHaveLength(64);
  });

  describe.each(AUTH_CASES)('with $name', (auth) => {
    let client: PlatformClient;
    let limiter: RateLimiter;
    beforeAll(() => {
      ({ client, limiter } = clientFor(auth, `test:api-resources:${auth.name}`));
    });
    afterAll(async () => {
      await client.close();
      await limiter.stop();
    });
    beforeEach(() => {
      server.reset();
    });

    it.each(CASES.map((c) => [caseName(c), c] as const))('%s', async (_name, c) => {
      const echo = { echo: `${c.method} ${c.path}` };
      const served = 'data' in c ? c.data : echo;
      server.respond(() => ({
        body: served === undefined ? { success: true, error_code: 1 } : envelope(served),
      }));
      const data = await c.invoke(client);

      expect(server.requests).toHaveLength(1);
      const req = server.last();
      expect(req.method).toBe(c.method);
      expect(req.path).toBe(c.path);
      expect(req.query).toEqual(c.query ?? {});
      if (c.body === undefined) {
        expect(req.rawBody).toBe('');
      } else {
        expect(req.body).toEqual(c.body);
        expect(req.headers['content-type']).toBe('application/json');
      }
      for (const [name, value] of Object.entries(auth.expected)) expect(req.headers[name]).toBe(value);
      for (const name of auth.absent) expect(req.headers[name]).toBeUndefined();
      expect(data).toEqual('result' in c ? c.result : served);
    });
  });

  describe('read or write', () => {
    let client: PlatformClient;
    let limiter: RateLimiter;
    beforeAll(() => {
      ({ client, limiter } = clientFor(AUTH_CASES[0]!, 'test:api-resources:write-flag'));
    });
    afterAll(async () => {
      await client.close();
      await limiter.stop();
    });
    beforeEach(() => {
      server.reset();
      // A 200 that is not the envelope: a write may or may not have been applied.
      server.respond(() => ({ body: '<html>gateway page</html>' }));
    });

    it.each(CASES.map((c) => [caseName(c), c] as const))(
      '%s: an unreadable answer is ambiguous for writes, transient for reads',
      async (_name, c) => {
        const error = await c.invoke(client).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).category).toBe(c.write ? 'ambiguous' : 'transient');
        expect((error as ApiError).path).toBe(c.path);
        expect(server.requests).toHaveLength(1);
      },
    );
  });
});
