import { Pool } from 'undici';

/** Calls to `POST /hooks/JOB` as a workflow sends them, over kept-alive connections. */
export interface HookCaller {
  /** Connections open now. */
  connected(): number;
  /** One call with `body`; resolves to its status and the milliseconds from sending to the answer's head. */
  post(body: unknown): Promise<{ status: number; ms: number }>;
  /**
   * The receiving process's event-loop delay since the previous call, from its
   * `/metrics` (prom-client's default metrics reset their histogram at each scrape).
   */
  eventLoopDelay(): Promise<{ p99Ms: number; maxMs: number }>;
  close(): Promise<void>;
}

/**
 * A pool of up to `connections` keep-alive connections to `origin` (the hook server),
 * opened before anything is measured: as many `GET /healthz` at once as connections, so
 * that no measured call pays for a TCP handshake. `token` goes in `Authorization`.
 */
export async function openHookCaller(options: {
  origin: string;
  job: string;
  token: string;
  connections: number;
}): Promise<HookCaller> {
  const pool = new Pool(options.origin, {
    connections: options.connections,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
  });
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const res = await pool.request({ path: '/healthz', method: 'GET' });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`GET ${options.origin}/healthz answered ${res.statusCode}`);
    }),
  );
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${options.token}` };
  const path = `/hooks/${encodeURIComponent(options.job)}`;
  return {
    connected: () => pool.stats.connected,
    async post(body) {
      const t0 = performance.now();
      const res = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(body) });
      const ms = performance.now() - t0;
      await res.body.dump();
      return { status: res.statusCode, ms };
    },
    async eventLoopDelay() {
      const res = await pool.request({ path: '/metrics', method: 'GET' });
      const text = await res.body.text();
      const read = (name: string) => {
        const match = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
        if (match === null) throw new Error(`${options.origin}/metrics has no ${name}`);
        return Number((Number(match[1]) * 1000).toFixed(1));
      };
      return {
        p99Ms: read('nodejs_eventloop_lag_p99_seconds'),
        maxMs: read('nodejs_eventloop_lag_max_seconds'),
      };
    },
    close: () => pool.close(),
  };
}

/** What {@link sendAtRate} measured. */
export interface AcceptFigures {
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Calls not answered 202 (or not answered at all), by status. */
  notAccepted: number;
  notAcceptedByStatus: Record<string, number>;
  /** How late this process sent the calls (its own stalls), p99 and max. */
  sentLateP99Ms: number;
  sentLateMaxMs: number;
}

/**
 * Sends one call for each body, the i-th at `i * intervalMs` after the start (not after
 * the previous answer: a slow answer does not slow the sender down), and measures each
 * from its sending to its answer.
 */
export async function sendAtRate(
  caller: HookCaller,
  bodies: readonly unknown[],
  intervalMs: number,
): Promise<AcceptFigures> {
  const latencies: number[] = [];
  const late: number[] = [];
  const notAccepted: Record<string, number> = {};
  const started = performance.now();
  let lastSent = started;
  await Promise.all(
    bodies.map(async (body, i) => {
      const due = started + i * intervalMs;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      lastSent = Math.max(lastSent, performance.now());
      late.push(performance.now() - due);
      try {
        const { status, ms } = await caller.post(body);
        latencies.push(ms);
        if (status !== 202) notAccepted[status] = (notAccepted[status] ?? 0) + 1;
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'error';
        notAccepted[code] = (notAccepted[code] ?? 0) + 1;
      }
    }),
  );
  // The rate the calls went out at: from the first sending to the last.
  const seconds = (lastSent - started) / 1000;
  return {
    calls: bodies.length,
    callsPerSecond: Number(((bodies.length - 1) / seconds).toFixed(1)),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: quantile(latencies, 1),
    notAccepted: Object.values(notAccepted).reduce((a, b) => a + b, 0),
    notAcceptedByStatus: notAccepted,
    sentLateP99Ms: quantile(late, 0.99),
    sentLateMaxMs: quantile(late, 1),
  };
}

/** The `q` quantile of `values` (nearest rank), to 0.1. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Number((sorted[at] ?? 0).toFixed(1));
}
