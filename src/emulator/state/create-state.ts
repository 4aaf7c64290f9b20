import type { UserRef } from '../wire-types.ts';
import type { DepartmentRecord, EmulatorState, RegionRecord, UserRecord } from './records.ts';

/**
 * The organisation every emulator starts with. Ids are fixed so a seed file can refer
 * to these members and departments (member and department fields, role members).
 */
export const DEFAULT_ORG = { id: '65f000000000000000000001', name: 'Rowbridge Demo Org' } as const;

export const DEFAULT_DEPARTMENTS: readonly DepartmentRecord[] = [
  { id: 'd0000000-0000-4000-8000-0000000000d1', name: 'Head Office', parentId: null },
  {
    id: 'd0000000-0000-4000-8000-0000000000d2',
    name: 'Sales',
    parentId: 'd0000000-0000-4000-8000-0000000000d1',
  },
  {
    id: 'd0000000-0000-4000-8000-0000000000d3',
    name: 'Sales North',
    parentId: 'd0000000-0000-4000-8000-0000000000d2',
  },
  {
    id: 'd0000000-0000-4000-8000-0000000000d4',
    name: 'Engineering',
    parentId: 'd0000000-0000-4000-8000-0000000000d1',
  },
];

export const DEFAULT_USERS: readonly UserRecord[] = [
  {
    accountId: 'a0000000-0000-4000-8000-000000000001',
    fullname: 'Ada Admin',
    email: 'ada@example.com',
    mobile: '13800001001',
    departmentIds: ['d0000000-0000-4000-8000-0000000000d1'],
  },
  {
    accountId: 'a0000000-0000-4000-8000-000000000002',
    fullname: 'Ben Sales',
    email: 'ben@example.com',
    mobile: '13800001002',
    departmentIds: ['d0000000-0000-4000-8000-0000000000d3'],
  },
  {
    accountId: 'a0000000-0000-4000-8000-000000000003',
    fullname: 'Cy Engineer',
    email: 'cy@example.com',
    mobile: '13800001003',
    departmentIds: ['d0000000-0000-4000-8000-0000000000d4'],
  },
];

export const DEFAULT_REGIONS: readonly RegionRecord[] = [
  { code: '110000', name: 'Beijing', parentCode: null },
  { code: '110100', name: 'Beijing City', parentCode: '110000' },
  { code: '110101', name: 'Dongcheng', parentCode: '110100' },
  { code: '310000', name: 'Shanghai', parentCode: null },
  { code: '310100', name: 'Shanghai City', parentCode: '310000' },
  { code: '310101', name: 'Huangpu', parentCode: '310100' },
  { code: '310104', name: 'Xuhui District', parentCode: '310100' },
  { code: '440000', name: 'Guangdong', parentCode: null },
  { code: '440100', name: 'Guangzhou', parentCode: '440000' },
  { code: '440300', name: 'Shenzhen', parentCode: '440000' },
];

/**
 * Who the platform names as the author of every row write made through the API, for an
 * app key, a personal token and OAuth alike (platform-shapes §3 [C]).
 */
export const API_USER: UserRef = { accountId: 'user-api', fullname: 'API' };

/** The owner of a row nobody was assigned to (platform-shapes §3 [C]). */
export const UNASSIGNED_OWNER: UserRef = { accountId: 'user-undefined', fullname: 'Unassigned' };

/** The default acting user: the organisation's administrator. */
export function adminUser(state: EmulatorState): UserRef {
  const first = state.users.values().next();
  if (first.done === true)
    return { accountId: DEFAULT_USERS[0]!.accountId, fullname: DEFAULT_USERS[0]!.fullname };
  return { accountId: first.value.accountId, fullname: first.value.fullname };
}

export function createEmptyState(): EmulatorState {
  return {
    revision: 0,
    org: { ...DEFAULT_ORG },
    users: new Map(DEFAULT_USERS.map((u) => [u.accountId, { ...u, departmentIds: [...u.departmentIds] }])),
    departments: new Map(DEFAULT_DEPARTMENTS.map((d) => [d.id, { ...d }])),
    regions: new Map(DEFAULT_REGIONS.map((r) => [r.code, { ...r }])),
    apps: new Map(),
    worksheets: new Map(),
    credentials: {
      appKeys: new Map(),
      personalTokens: new Map(),
      oauthClients: new Map(),
      refreshTokens: new Map(),
      accessTokens: new Map(),
    },
  };
}
