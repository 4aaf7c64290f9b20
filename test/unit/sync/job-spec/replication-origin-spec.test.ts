import { describe, expect, it } from 'vitest';
import { parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';

const job = (name: string, source: string, target: string) =>
  `name: ${name}\nsource: { ${source} }\ntarget: { ${target} }\nfields: { order_no: order_no }\n`;
const TWO_WAY = 'worksheet: orders, mode: two-way, key: order_no, conflict: source';
const PG = 'type: postgres, urlEnv: DB, table: public.orders, keyColumn: id';

describe('origin in a job spec', () => {
  it('is taken by a two-way postgres source and a postgres-cdc source', () => {
    const twoWay = parseJobSpec(job('sync', `${PG}, origin: rowbridge`, TWO_WAY), 'jobs/sync.yaml');
    expect(twoWay.source).toMatchObject({ type: 'postgres', origin: 'rowbridge' });
    const cdc = parseJobSpec(
      job(
        'cdc',
        'type: postgres-cdc, urlEnv: DB, table: public.orders, keyColumn: id, slot: s, publication: p, origin: rowbridge',
        'worksheet: orders, mode: upsert, key: order_no',
      ),
      'jobs/cdc.yaml',
    );
    expect(cdc.source).toMatchObject({ type: 'postgres-cdc', origin: 'rowbridge' });
  });

  it('is refused where nothing would use it, naming the field', () => {
    expect(() =>
      parseJobSpec(
        job('push', `${PG}, origin: rowbridge`, 'worksheet: orders, mode: upsert, key: order_no'),
        'jobs/push.yaml',
      ),
    ).toThrow(/source\.origin: is for mode two-way/);
    expect(() =>
      parseJobSpec(
        job('my', 'type: mysql, urlEnv: DB, table: orders, keyColumn: id, origin: rowbridge', TWO_WAY),
        'jobs/my.yaml',
      ),
    ).toThrow(/source\.origin: is for a PostgreSQL table only/);
    expect(() => parseJobSpec(job('bad', `${PG}, origin: Row-Bridge`, TWO_WAY), 'jobs/bad.yaml')).toThrow(
      /source\.origin: must be lower-case letters, digits and _/,
    );
  });
});
