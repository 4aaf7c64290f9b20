/**
 * A harness with a hook endpoint: the ops server of a worker (`POST /hooks/JOB`) on a free
 * port, and a `post` that calls it as the platform's workflow would.
 */
import { createReadiness } from '../../src/ops/health.ts';
import { createHookMetrics } from '../../src/ops/hooks/hook-metrics.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import type { Harness } from './sync-harness.ts';

export const HOOK_TOKEN = 'hook-token-0123456789abcdef';
export const HOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** An answer of the endpoint. */
export interface HookAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface HookServer {
  server: OpsServer;
  post(job: string, body: unknown, headers?: Record<string, string>): Promise<HookAnswer>;
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export async function startHookServer(h: Harness): Promise<HookServer> {
  const metrics = createMetrics(undefined, { defaultMetrics: false });
  const server = await startOpsServer({
    rt: h.rt,
    metrics,
    readiness: createReadiness(),
    port: 0,
    dashboard: false,
    hooks: { metrics: createHookMetrics(metrics.registry) },
  });
  return {
    server,
    async post(job, body, headers = { authorization: `Bearer ${HOOK_TOKEN}` }) {
      const res = await fetch(`${server.url}/hooks/${job}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
    },
    async metrics() {
      return (await metrics.render()).body;
    },
    async close() {
      await server.close();
      await metrics.close();
    },
  };
}
