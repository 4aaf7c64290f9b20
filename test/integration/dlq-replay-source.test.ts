import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as dlq } from '../../src/cli/dlq.ts';
import type { DeadLetterEntry } from '../../src/sync/state/dead-letter-entry.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const URL = 'postgres://root@127.0.0.1:5432/test';
const schema = `rb_dlq_src_${process.pid}_${Date.now()}`;

/**
 * Issue 13.2: `dlq replay` reads a row again from a source that can be read by key, so a
 * row fixed at the source lands fixed; a record a person fixed by file is kept as fixed.
 */
describe('dlq replay re-reads rows from the source', () => {
  let h: Harness;
  let sheet: string;
  let db: pg.Client;

  const entries = async (): Promise<DeadLetterEntry[]> => {
    const out: DeadLetterEntry[] = [];
    for await (const e of h.rt.deadLetters.iterate({ job: 'orders' })) out.push(e);
    return out;
  };
  const replay = async (...args: string[]) => {
    const io = captureIo({ ...h.env });
    io.cwd = h.dir;
    const code = await dlq(['replay', ...args], io);
    return { code, out: io.stdout.join('\n') };
  };
  const landed = () => new Map(h.emulator.state.rows(sheet).map((r) => [String(r.values.no), r.values]));

  beforeAll(async () => {
    db = new pg.Client({ connectionString: URL });
    await db.connect();
    await db.query(`CREATE SCHEMA ${schema}`);
    await db.query(
      `CREATE TABLE ${schema}.orders (no text PRIMARY KEY, amount text, updated_at timestamptz)`,
    );
    await db.query(
      `INSERT INTO ${schema}.orders VALUES ('O-1', '10', now()), ('O-2', 'ten', now()), ('O-3', 'three', now())`,
    );
    h = await createHarness('dlqsrc', {}, { ORDERS_DB: URL });
    sheet = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    await h.writeJob(
      'orders',
      `name: orders
source: { type: postgres, urlEnv: ORDERS_DB, allowPrivilegedSource: true, table: ${schema}.orders, cursorColumn: updated_at, keyColumn: no }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
`,
    );
  });
  afterAll(async () => {
    await h?.close();
    await db?.query(`DROP SCHEMA ${schema} CASCADE`);
    await db?.end();
  });

  it('replays the row as the source has it now, and the record a person fixed as fixed', async () => {
    const first = await h.runJob('orders');
    expect(first.report).toMatchObject({ created: 1, deadLetteredTotal: 2 });
    const byNo = new Map((await entries()).map((e) => [String(e.source.data.no), e]));
    const o2 = byNo.get('O-2')!;
    const o3 = byNo.get('O-3')!;
    expect(o2.source.position.id).toBe('O-2');

    // O-2 is fixed in the database; O-3 only in the dead letter (what `replay --file` does).
    await db.query(`UPDATE ${schema}.orders SET amount = '11' WHERE no = 'O-2'`);
    expect(await h.rt.deadLetters.replaceSource([{ id: o3.id, data: { no: 'O-3', amount: '33' } }])).toBe(1);

    const { code, out } = await replay(o2.id, o3.id);
    expect(code).toBe(0);
    expect(out).toContain('resolved 2 dead letters');
    expect(landed().get('O-2')).toMatchObject({ amount: 11 });
    expect(landed().get('O-3')).toMatchObject({ amount: 33 });
    expect(await entries()).toEqual([]);
  }, 60_000);

  it('falls back to the stored record when the source no longer has the row', async () => {
    await db.query(`INSERT INTO ${schema}.orders VALUES ('O-4', 'four', now())`);
    const run = await h.runJob('orders');
    // O-3 was fixed in its dead letter only: the source still has it wrong.
    expect(run.report).toMatchObject({ deadLetteredTotal: 2 });
    const o4 = (await entries()).find((e) => e.key === 'O-4');
    await db.query(`DELETE FROM ${schema}.orders WHERE no = 'O-4'`);
    const { code } = await replay(o4!.id);
    expect(code).toBe(2);
    const again = (await entries()).find((e) => e.key === 'O-4');
    // The stored record, failing as before, under the same id.
    expect(again).toMatchObject({ id: o4!.id, source: { data: { no: 'O-4', amount: 'four' } } });
  }, 60_000);

  it('keeps a fixed record authoritative when its replay fails again', async () => {
    const o3 = (await entries()).find((e) => e.key === 'O-3')!;
    // Fixed by file, but still wrong: it fails again, keeps its id and stays "fixed".
    await h.rt.deadLetters.replaceSource([{ id: o3.id, data: { no: 'O-3', amount: 'thirty' } }]);
    expect((await replay(o3.id)).code).toBe(2);
    const again = await h.rt.deadLetters.get(o3.id);
    expect(again).toMatchObject({ source: { data: { amount: 'thirty' } } });
    expect(again?.fixedAt).toBeDefined();
    // The next replay writes that record again, not the table's row ('three').
    await h.rt.deadLetters.replaceSource([{ id: o3.id, data: { no: 'O-3', amount: '30' } }]);
    expect((await replay(o3.id)).code).toBe(0);
    expect(landed().get('O-3')).toMatchObject({ amount: 30 });
  }, 60_000);
});
