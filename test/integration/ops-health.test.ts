import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createHealthCheck, createReadiness } from '../../src/ops/health.ts';
import type { HealthCheck, HealthReport, HealthSource } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function getHealth(url: string): Promise<{ status: number; text: string; body: HealthReport }> {
  const res = await fetch(`${url}/healthz`);
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as HealthReport };
}

describe('/healthz and /readyz', () => {
  let h: Harness;
  let metrics: Metrics;
  const cleanup: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    h = await createHarness('ops-health');
    metrics = createMetrics(undefined, { defaultMetrics: false });
  });
  afterAll(async () => {
    for (const release of cleanup.reverse()) await release();
    await metrics.close();
    await h.close();
  });

  async function serve(rt: Runtime, health?: HealthCheck, readiness = createReadiness()): Promise<OpsServer> {
    const server = await startOpsServer({
      rt,
      metrics,
      readiness,
      port: 0,
      dashboard: false,
      ...(health ? { health } : {}),
    });
    cleanup.push(() => server.close());
    return server;
  }

  /** A second runtime on the harness's Redis prefix with some variables changed. */
  function runtimeWith(changes: NodeJS.ProcessEnv): Runtime {
    const env = { ...h.env, ...changes };
    for (const [name, value] of Object.entries(changes)) if (value === undefined) delete env[name];
    const rt = createRuntime({
      settings: loadSettings(env),
      env,
      logger: createLogger({ level: 'silent' }),
      jobsDir: h.dir,
    });
    cleanup.push(() => rt.close());
    return rt;
  }

  it('answers 200 with Redis and the API reachable, naming where it looked', async () => {
    const server = await serve(h.rt);
    const { status, body } = await getHealth(server.url);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ok',
      redis: { status: 'reachable', target: '127.0.0.1:6379' },
      api: { status: 'reachable', target: h.emulator.url },
    });
    expect(h.emulator.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v3/users/me', errorCode: 1 });
  });

  it('answers 503 when the API URL points at a closed port, without any credential in the body', async () => {
    const rt = runtimeWith({ ROWBRIDGE_API_URL: `http://127.0.0.1:${await closedPort()}` });
    const server = await serve(rt);
    const { status, text, body } = await getHealth(server.url);
    expect(status).toBe(503);
    expect(body.status).toBe('failing');
    expect(body.redis.status).toBe('reachable');
    expect(body.api).toMatchObject({ status: 'unreachable', category: 'transient' });
    expect(text).not.toContain(h.env.ROWBRIDGE_SIGN);
    expect(text).not.toContain(h.env.ROWBRIDGE_APPKEY);
  });

  it('answers 503 with the auth category when the sign is wrong, and never echoes the sign', async () => {
    const wrongSign = `wrong-${h.env.ROWBRIDGE_SIGN}`;
    const rt = runtimeWith({ ROWBRIDGE_SIGN: wrongSign });
    const server = await serve(rt);
    const { status, text, body } = await getHealth(server.url);
    expect(status).toBe(503);
    expect(body.api).toMatchObject({ status: 'unreachable', category: 'auth' });
    expect(body.api.errorCode).toBeGreaterThan(0);
    expect(text).not.toContain(wrongSign);
    expect(text).not.toContain(h.env.ROWBRIDGE_APPKEY);
  });

  it('reports missing credentials as a config problem naming the variables', async () => {
    const rt = runtimeWith({ ROWBRIDGE_APPKEY: undefined, ROWBRIDGE_SIGN: undefined });
    const server = await serve(rt);
    const { status, body } = await getHealth(server.url);
    expect(status).toBe(503);
    expect(body.api).toMatchObject({ status: 'unreachable', category: 'config' });
    expect(body.api.message).toMatch(/ROWBRIDGE_APPKEY and ROWBRIDGE_SIGN/);
  });

  it('answers 503 when Redis does not answer, without the Redis password', async () => {
    const redisUrl = `redis://:hunter2-redis-secret@127.0.0.1:${await closedPort()}`;
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    redis.on('error', () => undefined);
    cleanup.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    const env = { ...h.env, REDIS_URL: redisUrl };
    const source: HealthSource = {
      redis,
      settings: loadSettings(env),
      env,
      clientFor: (prefix) => h.rt.clientFor(prefix),
    };
    const health = createHealthCheck(source, { timeoutMs: 500 });
    cleanup.push(() => health.close());
    const server = await serve(h.rt, health);
    const { status, text, body } = await getHealth(server.url);
    expect(status).toBe(503);
    expect(body.redis).toMatchObject({
      status: 'unreachable',
      target: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
    expect(body.api.status).toBe('reachable');
    expect(text).not.toContain('hunter2-redis-secret');
  });

  it('/readyz is 503 while starting, 200 once ready, 503 for good once stopping', async () => {
    const readiness = createReadiness();
    const server = await serve(h.rt, undefined, readiness);
    const ready = async () => {
      const res = await fetch(`${server.url}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string } };
    };
    expect(await ready()).toEqual({ status: 503, body: { status: 'starting' } });
    readiness.markReady();
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready' } });
    readiness.markStopping();
    readiness.markReady();
    expect(await ready()).toEqual({ status: 503, body: { status: 'stopping' } });
  });

  it('answers a failing scrape with 500 and no stack trace', async () => {
    const failing: Metrics = {
      ...metrics,
      render: () => Promise.reject(new Error('scrape exploded in collector')),
    };
    const server = await startOpsServer({
      rt: h.rt,
      metrics: failing,
      readiness: createReadiness(),
      port: 0,
      dashboard: false,
    });
    cleanup.push(() => server.close());
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).toBe('internal error: see the rowbridge log\n');
  });

  it('closes even while a request hangs, cutting its connection', async () => {
    let started!: () => void;
    const requestIn = new Promise<void>((resolve) => (started = resolve));
    const stuck: HealthCheck = {
      check: () => {
        started();
        return new Promise<HealthReport>(() => undefined);
      },
      close: () => Promise.resolve(),
    };
    const server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: false,
      health: stuck,
      closeTimeoutMs: 200,
    });
    const pending = fetch(`${server.url}/healthz`).then(
      () => 'answered',
      () => 'cut',
    );
    await requestIn;
    await server.close();
    expect(await pending).toBe('cut');
    await expect(fetch(`${server.url}/readyz`)).rejects.toThrow();
  });
});
