import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { loadSettings } from '../../config/settings.ts';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { hasHashTag, parseRedisUrl } from '../../src/queue/redis-connection.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import { startRedisCluster } from '../helpers/redis-cluster.ts';
import type { LocalRedisCluster } from '../helpers/redis-cluster.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const PREFIX = '{rbtest-cluster}';

const ORDERS: CreateWorksheetInput = {
  name: 'Orders',
  alias: 'orders',
  fields: [
    { name: 'Order number', alias: 'order_no', type: 'Text', required: true, isTitle: true },
    { name: 'Amount', alias: 'amount', type: 'Number' },
    {
      name: 'Status',
      alias: 'status',
      type: 'SingleSelect',
      options: [
        { value: 'New', index: 1 },
        { value: 'Paid', index: 2 },
      ],
    },
  ],
};

const JOB = `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 5, triggerWorkflow: false }
fields:
  order_no: Order
  amount: Total
  status: Status
`;

describe('REDIS_URL forms', () => {
  it('reads redis://, rediss:// and the cluster form with credentials and TLS', () => {
    expect(parseRedisUrl('redis://:pw@10.0.0.1:6380/2')).toEqual({
      kind: 'single',
      url: 'redis://:pw@10.0.0.1:6380/2',
    });
    expect(parseRedisUrl('rediss://cache.example:6380')).toMatchObject({ kind: 'single' });
    expect(parseRedisUrl('rediss+cluster://app:s%40cret@a.example:7000,b.example,[::1]:7002')).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'app',
      password: 's@cret',
      nodes: [
        { host: 'a.example', port: 7000 },
        { host: 'b.example', port: 6379 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  it('rejects other forms naming REDIS_URL and what is allowed, never echoing the password', () => {
    expect(() => parseRedisUrl('http://u:hunter2@h:1')).toThrow(
      /REDIS_URL must start with redis:\/\/, rediss:\/\/, redis\+cluster:\/\/ or rediss\+cluster:\/\/, got http:\/\//,
    );
    expect(() => parseRedisUrl('redis+cluster://:hunter2@')).toThrow(/lists no nodes/);
    expect(() => parseRedisUrl('redis+cluster://:hunter2@h:1/3')).toThrow(/only has database 0/);
    expect(() => parseRedisUrl('redis+cluster://:hunter2@h:1,h:99999')).toThrow(
      /node 2 "h:99999" is not host:port/,
    );
    for (const url of [
      'http://u:hunter2@h:1',
      'redis+cluster://:hunter2@h:1/3',
      'redis+cluster://:hunter2@h:1,h:99999',
    ]) {
      expect(() => parseRedisUrl(url)).toThrow(
        expect.objectContaining({ message: expect.not.stringContaining('hunter2') as unknown }) as Error,
      );
    }
  });

  it('knows which prefixes keep every key in one slot', () => {
    expect(hasHashTag('{rowbridge}')).toBe(true);
    expect(hasHashTag('prod:{rowbridge}:eu')).toBe(true);
    expect(hasHashTag('rowbridge')).toBe(false);
    expect(hasHashTag('{}rowbridge')).toBe(false);
    expect(hasHashTag('rowbridge{')).toBe(false);
  });
});

describe('rowbridge on a three-master Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let h: Harness;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    h = await createHarness('cluster', {}, { REDIS_URL: cluster.url, ROWBRIDGE_QUEUE_PREFIX: PREFIX });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await cluster?.close();
  });

  it('runs a job end to end through BullMQ on the cluster, every key in one slot', async () => {
    h.createWorksheet(ORDERS);
    const rows = Array.from(
      { length: 40 },
      (_, i) => `C-${i + 1},${i + 1}.25,${i % 2 === 0 ? 'New' : 'Paid'}`,
    );
    rows[17] = 'C-18,lots,Paid';
    await h.writeFile('orders.csv', ['Order,Total,Status', ...rows].join('\n') + '\n');
    await h.writeJob('orders', JOB);

    const first = await h.runJob('orders');
    expect(first.record.status).toBe('completed');
    // One batch job: a job holds ten platform batches (src/sync/batch/batch-job-size.ts).
    expect(first.report).toMatchObject({ read: 40, created: 39, deadLetteredTotal: 1, batches: 1 });
    const landed = new Map(h.emulator.state.rows('orders').map((r) => [r.text.order_no, r.text] as const));
    expect(landed.size).toBe(39);
    expect(landed.get('C-1')).toMatchObject({ amount: '1.25', status: 'New' });
    expect(landed.has('C-18')).toBe(false);
    const dead = await h.rt.deadLetters.list({ runId: first.record.runId });
    expect(dead.entries.map((e) => [e.field, e.source.position.line])).toEqual([['amount', 19]]);

    // The key index lives in the cluster too: a second run finds every row and writes nothing.
    const second = await h.runJob('orders');
    expect(second.report).toMatchObject({ read: 40, created: 0, unchanged: 39, deadLetteredTotal: 1 });
    expect(h.emulator.state.rowCount('orders')).toBe(39);

    // The hash tag puts the queue, the state and the budget on one master.
    const perNode = await Promise.all(
      cluster.ports.map(async (port) => {
        const node = new Redis({ host: '127.0.0.1', port });
        try {
          return (await node.keys(`${PREFIX}:*`)).length;
        } finally {
          node.disconnect();
        }
      }),
    );
    expect(perNode.filter((n) => n > 0)).toHaveLength(1);
    expect(perNode.reduce((a, b) => a + b, 0)).toBeGreaterThan(5);
  });

  it('refuses a queue prefix without a hash tag on a cluster, saying what to use', () => {
    const env = { ...h.env, ROWBRIDGE_QUEUE_PREFIX: 'rowbridge' };
    expect(() =>
      createRuntime({ settings: loadSettings(env), env, logger: createLogger({ level: 'silent' }) }),
    ).toThrow(
      /ROWBRIDGE_QUEUE_PREFIX "rowbridge" has no hash tag, but REDIS_URL is a cluster.*Use a prefix such as "\{rowbridge\}"/,
    );
  });
});
