/**
 * Leak: bull-board's page loaded its fonts from Google, so every dashboard view told a
 * third party who looks at the queues and when (IP, Referer-less but timed), and the CSP
 * had to allow those origins. Now the dashboard's pages name no outside origin and the
 * CSP allows only the dashboard itself.
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

/** Attributes that make a browser fetch something: src, href, and CSS url()/@import. */
const FETCHED = /(?:src|href)\s*=\s*["']?\s*([^"'\s>]+)|url\(\s*["']?([^"')\s]+)|@import\s+["']([^"']+)/gi;

describe('the dashboard loads nothing from outside', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;

  beforeAll(async () => {
    h = await createHarness('sec-fonts');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  it('serves bull-board and its own pages without any outside URL, under a CSP of the dashboard alone', async () => {
    // `/` only redirects to /runs since issue 23 §5, so /runs stands for the home page.
    for (const path of ['/queues', '/queues/', '/runs', '/jobs', '/dead-letters']) {
      const res = await rawRequest(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      const fetched = [...res.body.matchAll(FETCHED)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
      expect(fetched.length, path).toBeGreaterThan(0);
      const outside = fetched.filter(
        (url) => /^(?:[a-z][a-z0-9+.-]*:)?\/\//i.test(url) && !url.startsWith(server.url),
      );
      expect(outside, path).toEqual([]);
      const csp = String(res.headers['content-security-policy']);
      expect(csp, path).not.toMatch(/https?:|fonts\./);
      expect(csp, path).toMatch(/font-src 'self'/);
    }
  });
});
