import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as planMain } from '../../src/cli/plan.ts';
import { main as validate } from '../../src/cli/validate.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rb_cols_${process.pid}`;

/** A misspelt source column (`tier: { from: teir }`) once blanked Tier on every worksheet row. */
describe('a mapped column the source does not have', () => {
  let h: Harness;
  let customers: string;

  beforeAll(async () => {
    h = await createHarness('cols', {}, { CRM_DB: PG_URL });
    customers = h.createWorksheet({
      name: 'Customers',
      alias: 'customers',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Tier', alias: 'tier', type: 'Text' },
      ],
    });
    await pgQuery(`CREATE SCHEMA ${SCHEMA}`);
    await pgQuery(`CREATE TABLE ${SCHEMA}.customers (no text PRIMARY KEY, tier text)`);
    await pgQuery(
      `INSERT INTO ${SCHEMA}.customers SELECT 'C-' || i, 'Gold' FROM generate_series(1, 250) AS i`,
    );
    const job = (name: string, tierFrom: string) =>
      h.writeJob(
        name,
        `name: ${name}
source: { type: postgres, urlEnv: CRM_DB, allowPrivilegedSource: true, table: ${SCHEMA}.customers, cursorColumn: no }
target: { worksheet: customers, mode: upsert, key: no }
fields: { no: no, tier: { from: ${tierFrom} } }
`,
      );
    await job('crm', 'tier');
    await job('crm-typo', 'teir');
  });
  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await h.close();
  });

  it('fails the run before its first write, naming the column, the field and a close match; the worksheet is untouched', async () => {
    const good = await h.runJob('crm');
    expect(good.report).toMatchObject({ created: 250 });
    const before = h.emulator.state.rows(customers).map((r) => r.values);
    const writesBefore = h.emulator.requests.filter(
      (r) => r.method !== 'GET' && !r.path.endsWith('/list'),
    ).length;

    const typo = await h.runJob('crm-typo');
    expect(typo.record.status).toBe('failed');
    expect(typo.record.message).toMatch(
      /job crm-typo: the postgres source \(CRM_DB\) has no column the mapping reads; nothing was written/,
    );
    expect(typo.record.message).toContain('tier: { from: teir }: no such column (did you mean "tier"?)');
    expect(typo.report).toMatchObject({ created: 0, updated: 0 });
    const writesAfter = h.emulator.requests.filter(
      (r) => r.method !== 'GET' && !r.path.endsWith('/list'),
    ).length;
    expect(writesAfter).toBe(writesBefore);
    expect(h.emulator.state.rows(customers).map((r) => r.values)).toEqual(before);
    expect(before.every((v) => v.tier === 'Gold')).toBe(true);
  });

  it('plan warns when a mapped column is empty in every row while the run would clear the field it fills', async () => {
    await pgQuery(`CREATE TABLE ${SCHEMA}.renamed (no text PRIMARY KEY, tier text, level text)`);
    await pgQuery(
      `INSERT INTO ${SCHEMA}.renamed SELECT 'C-' || i, NULL, 'Gold' FROM generate_series(1, 250) AS i`,
    );
    await h.writeJob(
      'crm-renamed',
      `name: crm-renamed
source: { type: postgres, urlEnv: CRM_DB, allowPrivilegedSource: true, table: ${SCHEMA}.renamed, cursorColumn: no }
target: { worksheet: customers, mode: upsert, key: no }
fields: { no: no, tier: { from: tier } }
`,
    );
    const io = captureIo(h.env);
    expect(await planMain(['crm-renamed'], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/update\s+250/);
    expect(text).toContain(
      'warning: column "tier" is empty in all 250 rows read, and the run would clear Tier (tier) on 250 worksheet rows that hold a value: check the mapping',
    );
    const json = captureIo(h.env);
    expect(await planMain(['crm', '--json'], json)).toBe(0);
    expect(JSON.parse(json.stdout.join('')).warnings).toEqual([]);
  });

  it('validate names a CSV column the file lacks, and every environment variable the job names that is not set', async () => {
    await h.writeFile('people.csv', 'No,Tier\nP-1,Gold\n');
    await h.writeJob(
      'people',
      `name: people
source: { type: csv, path: ./people.csv }
target: { worksheet: customers, mode: upsert, key: no }
fields: { no: No, tier: { from: Teir } }
`,
    );
    await h.writeJob(
      'partner',
      `name: partner
source: { type: http, url: 'https://partner.example/api?key=\${PARTNER_KEY}', itemsPath: items }
target: { worksheet: customers, mode: upsert, key: no, app: { credentialsEnvPrefix: PARTNER_ } }
fields: { no: id }
`,
    );
    const io = captureIo({ ROWBRIDGE_SOURCE_ENV_ALLOW: 'PARTNER_KEY' });
    const code = await validate([`${h.dir}/people.yaml`, `${h.dir}/partner.yaml`], io);
    expect(code).toBe(1);
    const text = io.stderr.join('\n');
    expect(text).toMatch(
      /people\.yaml fields: job people: the csv source \.\/people\.csv has no column the mapping reads/,
    );
    expect(text).toContain('tier: { from: Teir }: no such column (did you mean "Tier"?)');
    expect(text).toMatch(
      /partner\.yaml source\.url: refers to \$\{PARTNER_KEY\}, but the environment variable PARTNER_KEY is not set/,
    );
    expect(text).toMatch(
      /partner\.yaml target\.app\.credentialsEnvPrefix: no platform credentials: set PARTNER_APPKEY and PARTNER_SIGN/,
    );
  });
});
