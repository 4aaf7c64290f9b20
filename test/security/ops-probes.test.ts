/**
 * Attack: `/healthz` as an amplifier. Each unauthenticated call used to send an
 * authenticated platform request outside the rate budget, for any Host: a few connections
 * made hundreds of platform requests a second, past the ceiling the budget keeps for the
 * credential, and a DNS-rebound page could drive it. Now the platform check is cached for
 * 10 s and waits its turn in the budget, and the probes answer only known hosts (421).
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createReadiness } from '../../src/ops/health.ts';
import type { HealthReport } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from './raw-request.ts';

const PROBES = ['/healthz', '/readyz', '/metrics'];

describe('the ops probes', () => {
  let h: Harness;
  let metrics: Metrics;
  const cleanup: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    h = await createHarness('sec-probes');
    metrics = createMetrics(undefined, { defaultMetrics: false });
  }, 60_000);

  afterAll(async () => {
    for (const release of cleanup.reverse()) await release();
    await metrics?.close();
    await h?.close();
  });

  /** A runtime of its own (its own budget key and client), on the harness's emulator and prefix. */
  function runtime(changes: NodeJS.ProcessEnv = {}): Runtime {
    const env = { ...h.env, ...changes };
    const rt = createRuntime({
      settings: loadSettings(env),
      env,
      logger: createLogger({ level: 'silent' }),
      jobsDir: h.dir,
    });
    cleanup.push(() => rt.close());
    return rt;
  }

  async function serve(rt: Runtime, host = '127.0.0.1'): Promise<OpsServer> {
    const server = await startOpsServer({
      rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      host,
      dashboard: false,
    });
    cleanup.push(() => server.close());
    return server;
  }

  const probeCalls = () => h.emulator.requests.filter((r) => r.path === '/v3/users/me').length;

  it('sends at most one platform request for a flood of /healthz calls', async () => {
    const server = await serve(runtime());
    const before = probeCalls();
    let calls = 0;
    const lanes = Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 15; i++) {
        const res = await fetch(`${server.url}/healthz`);
        expect(res.status).toBe(200);
        expect(((await res.json()) as HealthReport).api.status).toBe('reachable');
        calls += 1;
      }
    });
    await Promise.all(lanes);
    expect(calls).toBe(120);
    expect(probeCalls() - before).toBe(1);
  });

  it('waits for its turn in the credential budget: no platform request while the budget is paused', async () => {
    const rt = runtime({ ROWBRIDGE_RATE: '5', ROWBRIDGE_MAX_RATE: '5' });
    // What a throttled answer to any worker of this credential does: the shared budget pauses.
    await rt.clientFor().limiter.onThrottled({ code: 51, retryAfterMs: 60_000 });
    const server = await serve(rt);
    const before = probeCalls();
    const res = await fetch(`${server.url}/healthz`);
    const body = (await res.json()) as HealthReport;
    expect(probeCalls() - before).toBe(0);
    // Paced, not dead: an orchestrator must not restart a worker for being throttled.
    expect(res.status).toBe(200);
    expect(body.api).toMatchObject({ status: 'reachable', throttled: true });
  }, 20_000);

  it('answers 421 to a foreign Host on /healthz, /readyz and /metrics', async () => {
    const server = await serve(runtime());
    const before = probeCalls();
    for (const path of PROBES) {
      const res = await rawRequest(`${server.url}${path}`, { headers: { host: 'evil.example' } });
      expect(res.status, path).toBe(421);
      expect(res.body, path).not.toContain('rowbridge_');
    }
    expect(probeCalls() - before).toBe(0);
  });

  it('answers loopback, ROWBRIDGE_OPS_HOSTS, ROWBRIDGE_DASHBOARD_HOSTS, and on 0.0.0.0 its own interface addresses', async () => {
    const rt = runtime({
      ROWBRIDGE_OPS_HOSTS: 'worker, 10.9.8.7',
      ROWBRIDGE_DASHBOARD_HOSTS: 'dash.internal.example',
    });
    const server = await serve(rt, '0.0.0.0');
    const port = new URL(server.url).port;
    const own = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
    const hosts = [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'worker:9464',
      '10.9.8.7',
      'dash.internal.example',
    ];
    if (own !== undefined) hosts.push(`${own}:${port}`);
    for (const host of hosts) {
      for (const path of ['/readyz', '/metrics']) {
        const res = await rawRequest(`http://127.0.0.1:${port}${path}`, { headers: { host } });
        expect(res.status, `${host}${path}`).not.toBe(421);
      }
    }
    const foreign = await rawRequest(`http://127.0.0.1:${port}/metrics`, {
      headers: { host: 'worker.evil' },
    });
    expect(foreign.status).toBe(421);
  });
});
