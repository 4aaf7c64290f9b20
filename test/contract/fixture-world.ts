import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { EmulatorSeed } from '../../src/emulator/seed-schema.ts';

/**
 * The world the platform examples (shared/spec/platform-examples/) describe, as an emulator
 * seed: their members, departments, worksheets (Projects exactly as worksheet-get.json
 * defines it, with its option keys) and rows under their own ids, so that each example's
 * request can be sent as it is, adapted only in the field ids the emulator makes itself.
 */
export const EXAMPLES = path.resolve(import.meta.dirname, '../../../shared/spec/platform-examples');

/** One example file. */
export interface Fixture {
  method: string;
  path: string;
  request: { query?: Record<string, unknown>; body?: unknown };
  answer: unknown;
  variants?: Array<{ why: string; answer: unknown }>;
}

export function loadFixtures(): Array<{ file: string; fixture: Fixture }> {
  return readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      fixture: JSON.parse(readFileSync(path.join(EXAMPLES, file), 'utf8')) as Fixture,
    }));
}

/** A field of the structure example. */
export interface FixtureField {
  id: string;
  alias: string;
  type: string;
  subType?: number;
  [key: string]: unknown;
}

const fixtures = new Map(loadFixtures().map(({ file, fixture }) => [file, fixture]));

function fixture(file: string): Fixture {
  const found = fixtures.get(file);
  if (found === undefined) throw new Error(`${file} is missing from ${EXAMPLES}`);
  return found;
}

/** The Projects worksheet of worksheet-get.json. */
export const PROJECTS = (fixture('worksheet-get.json').answer as { data: { worksheetId: string } }).data;
export const PROJECT_FIELDS = (PROJECTS as unknown as { fields: FixtureField[] }).fields;
export const PROJECTS_ID = PROJECTS.worksheetId;
const CUSTOMER = PROJECT_FIELDS.find((f) => f.alias === 'customer')!;
const LINE_ITEMS = PROJECT_FIELDS.find((f) => f.type === 'SubTable')!;

export const HARBOR = '8f3a1c6e-2b94-4d7f-a051-6c9e2d8b4f17';
export const QUAY = '1d7e5b0c-9a36-4f28-8e41-3b6c0a9d2e85';
const NORTHWIND = '3e9a0d6b-4c71-4b2e-8f05-d7a1c9e3b648';
const PLANNED = '0b7c1f52-3a6e-4d19-8c27-5e1a9b3d7f40';

export const APP_KEY = 'fixture-world-appkey';
export const SIGN = 'fixture-world-sign';

/**
 * 2025-03-01 03:00:00 in Asia/Shanghai, the organisation's zone: inside the rows-list
 * example's `utime` range only when its bounds are read in that zone (read as UTC they
 * start 8 hours later and the rows fall out).
 */
export const WORLD_CLOCK = Date.parse('2025-02-28T19:00:00Z');

function definition(f: FixtureField): Record<string, unknown> {
  const keep = ['name', 'alias', 'type', 'required', 'isUnique', 'isTitle', 'isHidden', 'precision'];
  const def: Record<string, unknown> = Object.fromEntries(keep.filter((k) => k in f).map((k) => [k, f[k]]));
  for (const k of ['subType', 'max', 'dataSource', 'relation', 'sourceField', 'options'])
    if (k in f) def[k] = f[k];
  return def;
}

/** The row the create example writes, as Projects' seeded row HARBOR (keys by alias). */
function harborValues(): Record<string, unknown> {
  const body = fixture('row-create.json').request.body as { fields: Array<{ id: string; value: unknown }> };
  const alias = (id: string) => PROJECT_FIELDS.find((f) => f.id === id)?.alias ?? id;
  return Object.fromEntries(body.fields.map((f) => [alias(f.id), f.value]));
}

/** The seed; `projectRows: false` leaves Projects empty, for the examples that create its rows. */
export function worldSeed(projectRows: boolean): EmulatorSeed {
  return {
    users: [
      {
        accountId: 'f2b7d0a9-1c64-4e38-b5a2-8d9c3e6f0b71',
        fullname: 'Dana Whitfield',
        email: 'dwhitfield@example.com',
        mobile: '13912342048',
        departmentIds: ['d9a4f1c3-8b27-4e60-a5d9-1c7e3b0f6a82'],
      },
      {
        accountId: '4c8e1b3f-7a25-4d90-9e6b-0a3d5f8c2e16',
        fullname: 'Omar Reyes',
        email: 'omar@example.com',
      },
    ],
    departments: [
      { id: '7e3b0c5d-2f91-4a68-b7e4-9d0a6c2f1b53', name: 'Operations' },
      {
        id: '0c6d2a9f-5e13-4b87-a4f0-8b3e1d7c9a26',
        name: 'Delivery',
        parentId: '7e3b0c5d-2f91-4a68-b7e4-9d0a6c2f1b53',
      },
      {
        id: 'd9a4f1c3-8b27-4e60-a5d9-1c7e3b0f6a82',
        name: 'Field Engineering',
        parentId: '0c6d2a9f-5e13-4b87-a4f0-8b3e1d7c9a26',
      },
    ],
    apps: [
      {
        name: 'Field Projects',
        appKey: APP_KEY,
        sign: SIGN,
        worksheets: [
          {
            id: CUSTOMER.dataSource as string,
            name: 'Customers',
            alias: 'customers',
            fields: [{ name: 'Company', alias: 'company_name', type: 'Text', isTitle: true }],
            rows: [{ id: NORTHWIND, company_name: 'Northwind Ltd' }],
          },
          {
            id: LINE_ITEMS.dataSource as string,
            name: 'Line items',
            fields: [{ name: 'Item', alias: 'item', type: 'Text' }],
          },
          {
            id: PROJECTS_ID,
            name: 'Projects',
            alias: 'projects',
            fields: PROJECT_FIELDS.map(definition) as never,
            rows: projectRows
              ? [
                  { id: HARBOR, ...harborValues() },
                  { id: QUAY, project_name: 'Quay Wall Survey', budget: 48000, status: [PLANNED] },
                ]
              : [],
          },
        ],
      },
    ],
  };
}
