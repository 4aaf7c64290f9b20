/**
 * Two-way between two worksheets (issue 25) when a side refuses a record, from the CLI:
 * worksheet A ↔ worksheet B of another app, both with a unique `code`, B without the
 * option Bronze. A code a person gave one record on A and another record on B, a new
 * record on each side with the same code, and Bronze on A: the platform refuses the
 * copies (100005, on both worksheets, as updates and inside a batch create) and the
 * mapping refuses Bronze for B. Each is a dead letter naming the job, the record, the
 * field and the platform's code; every other edit and new record of the run lands; the
 * next run tries only the refused records again; fixed by a person, they sync and leave
 * the dead letters. Rows and writes are counted in the emulator.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const N = 8;
const fields = (tiers: string[]) => [
  { name: 'Email', alias: 'email', type: 'Text' as const },
  { name: 'Name', alias: 'name', type: 'Text' as const },
  { name: 'Code', alias: 'code', type: 'Text' as const, isUnique: true },
  {
    name: 'Tier',
    alias: 'tier',
    type: 'SingleSelect' as const,
    options: tiers.map((value, i) => ({ value, index: i + 1 })),
  },
];

let h: Harness;
let sheetA: WorksheetStructure;
let sheetB: WorksheetStructure;
let clientA: PlatformClient;
let clientB: PlatformClient;
const children: ChildProcess[] = [];

const cli = (...args: string[]) => spawnCli(h, children, args).exited;
/** `run people-crm`; it exits 2 when it dead-letters (the CLI's contract). */
async function run(expected: 0 | 2): Promise<void> {
  const done = await cli('run', 'people-crm');
  expect(done.code, done.stdout + done.stderr).toBe(expected);
}
const writesTo = (sheet: WorksheetStructure) =>
  h.emulator.requests.filter(
    (r) =>
      r.method !== 'GET' &&
      r.path.includes(sheet.id) &&
      /\/rows(\/|$)/.test(r.path) &&
      !r.path.endsWith('/list'),
  ).length;
const counts = () => ({ a: writesTo(sheetA), b: writesTo(sheetB) });
const byEmail = (sheet: WorksheetStructure) =>
  new Map(h.emulator.state.rows(sheet.id).map((r) => [r.text.email ?? '', r]));
/** Each record's email → name, code and tier as text. */
const content = (sheet: WorksheetStructure) =>
  new Map(
    [...byEmail(sheet)].map(([email, r]) => [email, `${r.text.name}|${r.text.code}|${r.text.tier ?? ''}`]),
  );
const setOn = (
  client: PlatformClient,
  sheet: WorksheetStructure,
  email: string,
  field: string,
  value: unknown,
) => client.rows.update(sheet.id, byEmail(sheet).get(email)!.id, { fields: [{ id: field, value }] });
const tierKey = (sheet: WorksheetStructure, value: string) =>
  sheet.fields.find((f) => f.alias === 'tier')!.options!.find((o) => o.value === value)!.key;
const create = (client: PlatformClient, sheet: WorksheetStructure, email: string, code: string) =>
  client.rows.batchCreate(sheet.id, {
    rows: [
      {
        fields: [
          { id: 'email', value: email },
          { id: 'name', value: `New ${email}` },
          { id: 'code', value: code },
        ],
      },
    ],
  });

interface Dead {
  category: string;
  errorCode?: number;
  field?: string;
  message: string;
  key: string;
}
async function deadLetters(): Promise<Dead[]> {
  const out = await cli('dlq', 'list', '--job', 'people-crm', '--json', '--limit', '100');
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Dead[];
}

beforeAll(async () => {
  h = await createHarness('two-way-ws-refused', { requestLogLimit: 1_000_000 });
  sheetA = h.emulator.createWorksheet(h.appId, {
    name: 'People',
    alias: 'people',
    fields: fields(['Gold', 'Silver', 'Bronze']),
  });
  const crm = h.emulator.createApp({ name: 'crm' });
  sheetB = h.emulator.createWorksheet(crm.appId, {
    name: 'Contacts',
    alias: 'contacts',
    fields: fields(['Gold', 'Silver']),
  });
  h.env.CRM_APPKEY = crm.appKey;
  h.env.CRM_SIGN = crm.sign;
  h.env.CRM_API_URL = h.emulator.url;
  clientA = h.rt.clientFor();
  clientB = h.rt.clientFor('CRM_');
  await clientA.rows.batchCreate(sheetA.id, {
    rows: Array.from({ length: N }, (_, i) => ({
      fields: [
        { id: 'email', value: `p${i + 1}@x.test` },
        { id: 'name', value: `Person ${i + 1}` },
        { id: 'code', value: `C${i + 1}` },
        { id: 'tier', value: [tierKey(sheetA, i % 2 === 0 ? 'Gold' : 'Silver')] },
      ],
    })),
  });
  await h.writeJob(
    'people-crm',
    `name: people-crm
source: { type: worksheet, worksheet: contacts, credentialsEnvPrefix: CRM_ }
target: { worksheet: people, mode: two-way, key: email }
fields:
  email: email
  name: name
  code: code
  tier: tier
`,
  );
  await run(0);
  expect(content(sheetB)).toEqual(content(sheetA));
  expect(byEmail(sheetB).size).toBe(N);
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
});

describe('two-way between worksheets: a record a side refuses (issue 25)', { timeout: 180_000 }, () => {
  it('is dead-lettered with its code; the rest lands; the next run retries only it; fixed, it syncs', async () => {
    // Refused: p1's code to B and p2's to A (the other record holds K there), na to B and
    // nb to A (each side's new record holds K2), Bronze to B (no such option).
    await setOn(clientA, sheetA, 'p1@x.test', 'code', 'K');
    await setOn(clientB, sheetB, 'p2@x.test', 'code', 'K');
    await create(clientA, sheetA, 'na@x.test', 'K2');
    await create(clientB, sheetB, 'nb@x.test', 'K2');
    await setOn(clientA, sheetA, 'p3@x.test', 'tier', [tierKey(sheetA, 'Bronze')]);
    // Written: an edit on each side, a new record on each side (in the refused ones' batches).
    await setOn(clientA, sheetA, 'p4@x.test', 'name', 'Edited on A');
    await setOn(clientB, sheetB, 'p5@x.test', 'name', 'Edited on B');
    await create(clientA, sheetA, 'ga@x.test', 'G1');
    await create(clientB, sheetB, 'gb@x.test', 'G2');

    await run(2);
    const a = byEmail(sheetA);
    const b = byEmail(sheetB);
    expect([a.size, b.size]).toEqual([N + 3, N + 3]);
    for (const sheet of [a, b]) {
      expect(sheet.get('p4@x.test')?.text.name).toBe('Edited on A');
      expect(sheet.get('p5@x.test')?.text.name).toBe('Edited on B');
      expect(sheet.has('ga@x.test') && sheet.has('gb@x.test')).toBe(true);
    }
    expect([a.has('nb@x.test'), b.has('na@x.test')]).toEqual([false, false]);
    expect([a.get('p1@x.test')?.text.code, b.get('p1@x.test')?.text.code]).toEqual(['K', 'C1']);
    expect([a.get('p2@x.test')?.text.code, b.get('p2@x.test')?.text.code]).toEqual(['C2', 'K']);
    expect([a.get('p3@x.test')?.text.tier, b.get('p3@x.test')?.text.tier]).toEqual(['Bronze', 'Gold']);

    const dead = await deadLetters();
    const summary = (d: Dead) => {
      const record = /record (\S+@x\.test)/.exec(d.message)?.[1];
      const by = d.message.includes('by source worksheet contacts') ? 'B' : 'A';
      return `${by} ${record} ${d.field} ${d.errorCode ?? '-'}`;
    };
    expect(dead.map(summary).sort()).toEqual([
      'A nb@x.test code 100005',
      'A p2@x.test code 100005',
      'B na@x.test code 100005',
      'B p1@x.test code 100005',
      'B p3@x.test tier -',
    ]);
    for (const d of dead) {
      expect(d.category).toBe('invalid-row');
      expect(d.message).toMatch(/^two-way job people-crm: record \S+@x\.test \(.+\) was refused by /);
    }
    expect(dead.find((d) => d.field === 'tier')!.message).toContain('Bronze');

    // Nothing changed: the run asks again for the refused records only, each refused again.
    const before = counts();
    await run(2);
    // A: p2's update and nb's create; B: p1's update and na's create (Bronze is refused unsent).
    expect(counts()).toEqual({ a: before.a + 2, b: before.b + 2 });
    expect((await deadLetters()).map(summary).sort()).toEqual(dead.map(summary).sort());

    // A person fixes them on A: the refused records sync and leave the dead letters.
    await setOn(clientA, sheetA, 'p1@x.test', 'code', 'K1');
    await setOn(clientA, sheetA, 'na@x.test', 'code', 'K3');
    await setOn(clientA, sheetA, 'p3@x.test', 'tier', [tierKey(sheetA, 'Gold')]);
    await run(0);
    expect(await deadLetters()).toEqual([]);
    expect(byEmail(sheetA).size).toBe(N + 4);
    expect(content(sheetB)).toEqual(content(sheetA));
    expect(byEmail(sheetA).get('p2@x.test')?.text.code).toBe('K');
    expect(byEmail(sheetB).get('p1@x.test')?.text.code).toBe('K1');
    const settled = counts();
    await run(0);
    expect(counts()).toEqual(settled);
  });
});
