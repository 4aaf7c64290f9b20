/**
 * The scenario of two-way-table-refused(-mysql).test.ts: a two-way job whose table refuses
 * some of the worksheet's records (a duplicate of a UNIQUE column, a value too long for
 * varchar(20), a CHECK violation, a delete a foreign key holds), among good edits, new
 * records and a delete. Each database's test gives its table (contacts: id, email,
 * full_name varchar(20), handle UNIQUE, score CHECK (score >= 0); orders referencing
 * contacts; writes counted by triggers) and the codes it expects.
 */
import { expect } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import type { DeadLetterEntry } from '../../src/sync/state/dead-letter-entry.ts';
import type { Harness } from './sync-harness.ts';

/** 40 records t0..t39 (handle h<i>, score <i>) are in the table before the first run. */
export const SEEDED = 40;

/** What one database's test gives the scenario. */
export interface RefusedTable {
  h: Harness;
  sheet: WorksheetStructure;
  job: string;
  /** The contacts table's name in SQL, and its child table holding a contact by foreign key. */
  table: string;
  orders: string;
  /** Runs one statement on the test's own admin connection. */
  exec(sql: string): Promise<void>;
  /** Committed writes to contacts, counted by its triggers. */
  tableWrites(): Promise<number>;
  /** Every contact as email → `full_name|handle|score`. */
  contents(): Promise<Map<string, string>>;
  /** What each refusal's dead letter shows: a code (errorCode, or in the message) and the field. */
  expect: Record<'unique' | 'tooLong' | 'check' | 'foreignKey', { code: RegExp; errorCode?: number }>;
}

export async function refusedTableScenario(t: RefusedTable): Promise<void> {
  const { h, sheet } = t;
  const client: PlatformClient = h.rt.clientFor();
  const sheetWrites = () =>
    h.emulator.requests.filter(
      (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
    ).length;
  const rowOf = (email: string) => h.emulator.state.rows(sheet.id).find((r) => r.text.email === email)!.id;
  const edit = (email: string, fields: Array<{ id: string; value: unknown }>) =>
    client.rows.update(sheet.id, rowOf(email), { fields });
  const create = (rows: Array<[string, string, string, number]>) =>
    client.rows.batchCreate(sheet.id, {
      rows: rows.map(([email, name, handle, score]) => ({
        fields: [
          { id: 'email', value: email },
          { id: 'name', value: name },
          { id: 'handle', value: handle },
          { id: 'score', value: score },
        ],
      })),
    });
  const run = async () => {
    const { record } = await h.runJob(t.job);
    expect(record.status, record.message).toBe('completed');
  };
  const deadLetters = async () => {
    const out: DeadLetterEntry[] = [];
    for await (const e of h.rt.deadLetters.iterate({ job: t.job })) out.push(e);
    return out;
  };
  const long = 'A name far too long for twenty';

  // First run: the table's 40 records are created in the worksheet; then nothing to write.
  await run();
  expect(h.emulator.state.rows(sheet.id)).toHaveLength(SEEDED);
  await t.exec(`INSERT INTO ${t.orders} (contact_id) SELECT id FROM ${t.table} WHERE email = 't39@x.test'`);

  // Good edits, new records and a delete, among records the table refuses.
  for (let i = 0; i < 5; i++) await edit(`t${i}@x.test`, [{ id: 'name', value: `Edit ${i}` }]);
  await edit('t5@x.test', [{ id: 'handle', value: 'h6' }]);
  await edit('t7@x.test', [{ id: 'name', value: long }]);
  await edit('t8@x.test', [{ id: 'score', value: -5 }]);
  await create([
    ...Array.from({ length: 6 }, (_, i): [string, string, string, number] => [
      `n${i}@x.test`,
      `New ${i}`,
      `nh${i}`,
      i,
    ]),
    ['nd@x.test', 'New dup', 'h1', 1],
    ['nl@x.test', long, 'nlh', 1],
    ['nc@x.test', 'New check', 'nch', -1],
  ]);
  await client.rows.batchDelete(sheet.id, { rowIds: [rowOf('t38@x.test'), rowOf('t39@x.test')] });
  const before = await t.contents();
  let writes = { table: await t.tableWrites(), sheet: sheetWrites() };

  await run();
  const after = await t.contents();
  // 5 updates, 6 inserts and 1 delete committed, each once; the refused rolled back.
  expect((await t.tableWrites()) - writes.table).toBe(12);
  for (let i = 0; i < 5; i++) expect(after.get(`t${i}@x.test`)).toBe(`Edit ${i}|h${i}|${i}`);
  for (let i = 0; i < 6; i++) expect(after.get(`n${i}@x.test`)).toBe(`New ${i}|nh${i}|${i}`);
  for (const email of ['t5@x.test', 't7@x.test', 't8@x.test', 't39@x.test'])
    expect(after.get(email)).toBe(before.get(email));
  expect(after.has('t38@x.test')).toBe(false);
  for (const email of ['nd@x.test', 'nl@x.test', 'nc@x.test']) expect(after.has(email)).toBe(false);
  expect(after.size).toBe(SEEDED - 1 + 6);

  const dead = await deadLetters();
  const expected: Array<[string, keyof RefusedTable['expect'], string]> = [
    ['t5@x.test', 'unique', 'handle'],
    ['nd@x.test', 'unique', 'handle'],
    ['t7@x.test', 'tooLong', 'full_name'],
    ['nl@x.test', 'tooLong', 'full_name'],
    ['t8@x.test', 'check', 'score'],
    ['nc@x.test', 'check', 'score'],
  ];
  expect(dead, JSON.stringify(dead, null, 1)).toHaveLength(expected.length + 1);
  for (const [email, kind, field] of expected) {
    const entry = dead.find((e) => e.message.includes(`record ${email} (`));
    expect(entry, `${email}: ${JSON.stringify(dead, null, 1)}`).toBeDefined();
    expect(entry!.message).toMatch(`two-way job ${t.job}`);
    expect(entry!.message).toMatch(t.expect[kind].code);
    expect(entry!.message).toMatch('allowed: ');
    expect(entry!.field).toBe(field);
    expect(entry!.errorCode).toBe(t.expect[kind].errorCode);
  }
  const held = dead.find((e) => !expected.some(([email]) => e.message.includes(`record ${email} (`)))!;
  expect(held.message).toMatch(t.expect.foreignKey.code);
  expect(held.message).toMatch(/referencing it/);
  expect(held.errorCode).toBe(t.expect.foreignKey.errorCode);
  expect(dead.find((e) => e.message.includes('t7@x.test'))!.message).toMatch(/at most 20 characters/);

  // The next run tries only the refused records: the table commits nothing, the worksheet
  // is not written, and the same records are dead letters of that run.
  writes = { table: await t.tableWrites(), sheet: sheetWrites() };
  await run();
  expect({ table: await t.tableWrites(), sheet: sheetWrites() }).toEqual(writes);
  const again = await deadLetters();
  expect(again.map((e) => e.message).sort()).toEqual(dead.map((e) => e.message).sort());
  expect(new Set(again.map((e) => e.runId)).size).toBe(1);
  expect(again[0]!.runId).not.toBe(dead[0]!.runId);

  // A person fixes each: they sync, the dead letters clear, then nothing is written.
  await edit('t5@x.test', [{ id: 'handle', value: 'h5x' }]);
  await edit('t7@x.test', [{ id: 'name', value: 'Short 7' }]);
  await edit('t8@x.test', [{ id: 'score', value: 9 }]);
  await edit('nd@x.test', [{ id: 'handle', value: 'ndx' }]);
  await edit('nl@x.test', [{ id: 'name', value: 'Short l' }]);
  await edit('nc@x.test', [{ id: 'score', value: 3 }]);
  await t.exec(`DELETE FROM ${t.orders}`);
  writes = { table: await t.tableWrites(), sheet: sheetWrites() };
  await run();
  expect((await t.tableWrites()) - writes.table).toBe(7);
  const fixed = await t.contents();
  expect(fixed.get('t5@x.test')).toBe('Person 5|h5x|5');
  expect(fixed.get('t7@x.test')).toBe('Short 7|h7|7');
  expect(fixed.get('t8@x.test')).toBe('Person 8|h8|9');
  expect(fixed.get('nd@x.test')).toBe('New dup|ndx|1');
  expect(fixed.get('nl@x.test')).toBe('Short l|nlh|1');
  expect(fixed.get('nc@x.test')).toBe('New check|nch|3');
  expect(fixed.has('t39@x.test')).toBe(false);
  expect(fixed.size).toBe(SEEDED - 2 + 9);
  expect(await deadLetters()).toEqual([]);

  writes = { table: await t.tableWrites(), sheet: sheetWrites() };
  await run();
  expect({ table: await t.tableWrites(), sheet: sheetWrites() }).toEqual(writes);
  expect(await deadLetters()).toEqual([]);
}
