/**
 * Attack: with bull-board writable by default, anyone who can load the dashboard can
 * pause the runs queue, add a run with `force: true` (past a mirror's delete threshold)
 * or obliterate a queue, and read the personal data in batch job rows. By default the
 * dashboard is read-only and shows batch jobs by their ids only.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_QUEUE, RUN_QUEUE } from '../../src/queue/queues.ts';
import { batchJobRows } from '../../src/sync/batch/batch-job-rows.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from './raw-request.ts';

const PERSONAL = 'jane.doe@example.com';

describe('the dashboard is read-only by default', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let runs: Queue;
  let batches: Queue;

  beforeAll(async () => {
    h = await createHarness('sec-read-only');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
    });
    const opts = { connection: h.rt.connection, prefix: h.rt.queuePrefix };
    runs = new Queue(RUN_QUEUE, opts);
    batches = new Queue(BATCH_QUEUE, opts);
    // Waiting batches, as a run leaves them: rows carry the source records.
    for (const index of [7, 8]) {
      const position = { index, line: index + 2 };
      const row = {
        index,
        source: { data: { email: PERSONAL }, position },
        mapped: { ok: true as const, fields: [{ id: 'f-email', value: PERSONAL }], hash: '', position },
      };
      await batches.add(
        'batch',
        { runId: 'r-1', job: 'people', batchNo: index - 7, ...batchJobRows([row], ['email']) },
        { jobId: `r-1-${index - 7}`, delay: 3_600_000 },
      );
    }
    // Rows as another version might carry them: the viewer sees no more of those.
    await batches.add(
      'batch',
      {
        runId: 'r-1',
        job: 'people',
        batchNo: 2,
        format: 0,
        rows: [{ index: 9, source: { data: { email: PERSONAL } } }],
      },
      { jobId: 'r-1-2', delay: 3_600_000 },
    );
  }, 60_000);

  afterAll(async () => {
    await batches?.obliterate({ force: true });
    await runs?.close();
    await batches?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  const write = (path: string, method: string, body?: unknown) =>
    rawRequest(`${server.url}/queues/api/queues/${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        origin: server.url,
        'sec-fetch-site': 'same-origin',
        'x-rowbridge-csrf': '1',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('refuses pause, add, update-data and obliterate through bull-board', async () => {
    expect((await write('runs/pause', 'PUT')).status).toBe(405);
    expect(
      (
        await write('runs/add', 'POST', {
          name: 'run',
          data: { job: 'people', trigger: 'enqueue', force: true },
        })
      ).status,
    ).toBe(405);
    expect((await write('batches/r-1-0/update-data', 'PATCH', { data: { rows: [] } })).status).toBe(405);
    expect((await write('batches/obliterate', 'PUT')).status).toBe(405);
    expect(await runs.isPaused()).toBe(false);
    expect(await runs.count()).toBe(0);
    const job = await batches.getJob('r-1-0');
    expect(job?.data).toMatchObject({ columnar: { n: 1 } });
  });

  it('shows a batch job by its ids, not its rows', async () => {
    const res = await rawRequest(`${server.url}/queues/api/queues?activeQueue=batches&status=delayed`);
    expect(res.status).toBe(200);
    expect(res.body).toContain('"runId":"r-1"');
    expect(res.body).toContain('"rowIndexes":[7]');
    expect(res.body).toContain('"rowIndexes":[8]');
    expect(res.body).not.toContain(PERSONAL);
    expect(res.body).toContain('"batchNo":2');
    for (const id of ['r-1-0', 'r-1-1', 'r-1-2']) {
      const one = await rawRequest(`${server.url}/queues/api/queues/batches/${id}`);
      expect(one.status).toBe(200);
      expect(one.body).toContain(`"id":"${id}"`);
      expect(one.body).not.toContain(PERSONAL);
    }
  });

  it("hides Redis's details (version, memory, clients, uptime) from a read-only viewer (issue 22)", async () => {
    const res = await rawRequest(`${server.url}/queues/api/redis/stats`);
    expect(res.status).toBe(403);
    expect(res.body).not.toMatch(/redis_version|"version"|used_memory|"memory"|connected_clients|uptime/);
  });
});
