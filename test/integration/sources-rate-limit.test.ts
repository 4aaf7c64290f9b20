import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/settings.ts';
import { main as enqueueMain } from '../../src/cli/enqueue.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createWorkers } from '../../src/queue/create-workers.ts';
import type { Workers } from '../../src/queue/create-workers.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/**
 * source.rateLimit (issue 24 §6): three workers (three runtimes, each with its own Redis
 * connections, as three processes have) read the chunks of one http backfill; the
 * third-party server counts what reaches it. Each chunk reads every page (an http source
 * filters to its range client-side), so the workers together want far more than the
 * limit allows.
 */
const ITEMS = 60;
const PAGE = 10;
const PER_SECOND = 5;
const CONCURRENT = 2;

describe('http source rateLimit shared by every worker of the job', () => {
  let h: Harness;
  let ws: string;
  let server: Server;
  const arrivals: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const extra: { rt: Runtime; workers: Workers }[] = [];

  beforeAll(async () => {
    const items = Array.from({ length: ITEMS }, (_, i) => ({ id: `F-${i + 1}`, seq: i + 1 }));
    server = createServer((req, res) => {
      arrivals.push(Date.now());
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'));
      // A slow answer, so that requests would overlap if nothing held them back.
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(items.slice((page - 1) * PAGE, page * PAGE)), () => {
          inFlight -= 1;
        });
      }, 60);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`;

    h = await createHarness('ratelimit');
    ws = h.createWorksheet({
      name: 'Feed',
      alias: 'feed',
      fields: [
        { name: 'Id', alias: 'fid', type: '2', required: true, isTitle: true },
        { name: 'Seq', alias: 'seq', type: '6' },
      ],
    });
    await h.writeJob(
      'feed',
      `name: feed
source:
  type: http
  url: ${url}
  pagination: { type: page, pageSize: ${PAGE} }
  rateLimit: { perSecond: ${PER_SECOND}, concurrent: ${CONCURRENT} }
target: { worksheet: feed, mode: upsert, key: fid, batchSize: 50 }
fields: { fid: id, seq: seq }
incremental: { cursor: seq }
`,
    );
    for (let i = 0; i < 2; i += 1) {
      const rt = createRuntime({
        settings: loadSettings(h.env),
        env: h.env,
        logger: createLogger({ level: 'silent' }),
        jobsDir: h.dir,
      });
      extra.push({ rt, workers: createWorkers(rt, { concurrency: 2, closeTimeoutMs: 10_000 }) });
    }
  });

  afterAll(async () => {
    for (const { rt, workers } of extra.reverse()) {
      await workers.close();
      await rt.close();
    }
    await h.close();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  });

  it('never lets the workers together past perSecond or concurrent, and lands every row once', async () => {
    const io = captureIo(h.env);
    expect(
      await enqueueMain(['feed', '--from', '1', '--to', String(ITEMS), '--chunks', '6', '--json'], io),
    ).toBe(0);
    const { runId } = JSON.parse(io.all.join('')) as { runId: string };
    h.startWorkers(2);
    const { record, report } = await h.waitForRun(runId, 120_000);
    expect(record.status).toBe('completed');
    expect(report).toMatchObject({ read: ITEMS, created: ITEMS, deadLetteredTotal: 0 });
    const landed = h.emulator.state.rows(ws).map((r) => r.values.fid);
    expect(landed).toHaveLength(ITEMS);
    expect(new Set(landed).size).toBe(ITEMS);

    // 6 chunks × 7 pages (the last one empty).
    expect(arrivals.length).toBe(6 * (ITEMS / PAGE + 1));
    const perSecond = new Map<number, number>();
    for (const at of arrivals)
      perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(PER_SECOND);
    expect(maxInFlight).toBeLessThanOrEqual(CONCURRENT);
  }, 150_000);
});
