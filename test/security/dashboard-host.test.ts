/**
 * Attack: DNS rebinding. A page on evil.example re-points its name at 127.0.0.1 and
 * reads the loopback dashboard as its own origin; the only trace is `Host:
 * evil.example`. Unknown hosts get 421; the probes stay open to any host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from './raw-request.ts';

describe('the dashboard answers only the hosts it knows', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;

  beforeAll(async () => {
    h = await createHarness('sec-host');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
      access: { hosts: 'dash.internal.example' },
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  it('refuses a foreign Host on the pages and on bull-board', async () => {
    const port = new URL(server.url).port;
    for (const path of ['/', '/dead-letters', '/queues', '/queues/api/queues']) {
      const res = await rawRequest(`${server.url}${path}`, { headers: { host: `evil.example:${port}` } });
      expect(res.status, path).toBe(421);
      expect(res.body).not.toContain('runs');
    }
  });

  it('serves localhost, 127.0.0.1 and the configured host, with the security headers', async () => {
    const port = new URL(server.url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'dash.internal.example']) {
      // `/` redirects to /runs since issue 23 §5: the page itself is what a known host is served.
      const res = await rawRequest(`${server.url}/runs`, { headers: { host } });
      expect(res.status, host).toBe(200);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
  });

  it('answers /readyz and /metrics for the dashboard hosts, 421 for others (issue 22; test/security/ops-probes.test.ts)', async () => {
    for (const path of ['/readyz', '/metrics']) {
      const known = await rawRequest(`${server.url}${path}`, { headers: { host: 'dash.internal.example' } });
      expect(known.status, path).not.toBe(421);
      const res = await rawRequest(`${server.url}${path}`, { headers: { host: '10.1.2.3:9000' } });
      expect(res.status, path).toBe(421);
    }
  });
});
