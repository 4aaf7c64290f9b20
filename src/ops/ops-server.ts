/**
 * The operator HTTP server of a rowbridge process: `/metrics` (Prometheus), `/healthz`,
 * `/readyz`, and the dashboard when asked. Served by `rowbridge dashboard` and by a
 * worker started with `--dashboard`. The probes and `/metrics` need no login
 * (orchestrators and scrapers have none) but answer only known hosts (421 otherwise,
 * host-allow-list.ts); the dashboard sits behind its access guard; `POST /hooks/JOB`,
 * when served, checks each call's own token or signature and answers any Host (the
 * platform calls by a public name). Every answer carries the security headers.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { ConfigError } from '../ground/errors.ts';
import type { Runtime } from '../queue/runtime-types.ts';
import type { Dashboard } from './dashboard/create-dashboard.ts';
import { createDashboardAccess } from './dashboard/dashboard-access.ts';
import type { DashboardAccessOptions } from './dashboard/dashboard-access.ts';
import { securityHeaders } from './dashboard/security-headers.ts';
import { createHealthCheck } from './health.ts';
import { createHostAllowList, hostName } from './host-allow-list.ts';
import type { HealthCheck, Readiness } from './health.ts';
import type { Metrics } from './metrics.ts';
import type { HookMetrics } from './hooks/hook-metrics.ts';
import type { HookRoutes } from './hooks/hook-routes.ts';

/** Options of {@link startOpsServer}. */
export interface OpsServerOptions {
  rt: Runtime;
  /** Served at `/metrics`; the caller feeds it (and calls `collectFrom(rt)` once) and closes it. */
  metrics: Metrics;
  readiness: Readiness;
  /** 0 picks a free port. @defaultValue 3000 */
  port?: number;
  /** @defaultValue '127.0.0.1' (beyond loopback the dashboard needs a token or users) */
  host?: string;
  /** Serve the dashboard pages and bull-board besides the probes. */
  dashboard: boolean;
  /**
   * Let bull-board pause, add, retry, clean and obliterate, and show batch rows.
   * @defaultValue false
   */
  allowWrites?: boolean;
  /**
   * Login and host settings of the dashboard.
   * @defaultValue the runtime's settings (ROWBRIDGE_DASHBOARD_TOKEN, _USERS, _HOSTS)
   */
  access?: Pick<DashboardAccessOptions, 'token' | 'users' | 'hosts' | 'logins'>;
  /**
   * Hosts the probes answer besides the dashboard's.
   * @defaultValue the runtime's ROWBRIDGE_OPS_HOSTS
   */
  opsHosts?: string | undefined;
  /** @defaultValue a check of the runtime's Redis and its default API credential */
  health?: HealthCheck;
  /**
   * Serve `POST /hooks/JOB` (ops/hooks/hook-routes.ts), counted in these metrics. Hooks
   * answer any Host: each call carries its own credential.
   */
  hooks?: { metrics?: HookMetrics | undefined } | undefined;
  /** Longest wait for open requests on close before their connections are cut. @defaultValue 5000 */
  closeTimeoutMs?: number;
}

/** A running ops server. */
export interface OpsServer {
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /** Stops listening, waits (bounded) for open requests, then releases its queue handles. */
  close(): Promise<void>;
}

const PROBE_PATHS = ['/metrics', '/healthz', '/readyz'];

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(
        new ConfigError(`ops server: cannot listen on ${host}:${port} (${err.code ?? err.message})`, {
          cause: err,
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { rt, metrics, readiness } = options;
  const host = options.host ?? '127.0.0.1';
  const closeTimeoutMs = options.closeTimeoutMs ?? 5000;
  const ownsHealth = options.health === undefined;
  const health = options.health ?? createHealthCheck(rt);
  const settings = options.access ?? {
    token: rt.settings.dashboardToken,
    users: rt.settings.dashboardUsers,
    hosts: rt.settings.dashboardHosts,
  };
  // Before anything opens: a dashboard that would be open to the network does not start.
  const access = options.dashboard
    ? createDashboardAccess({ ...settings, bindHost: host, allowWrites: options.allowWrites === true })
    : undefined;
  // bull-board and the dashboard's pages are imported only when they are served.
  const dashboard: Dashboard | undefined =
    access === undefined
      ? undefined
      : (await import('./dashboard/create-dashboard.ts')).createDashboard({
          rt,
          access,
          cdcLag: rt.settings,
        });

  const hooks: HookRoutes | undefined =
    options.hooks === undefined
      ? undefined
      : (await import('./hooks/hook-routes.ts')).createHookRoutes({ rt, metrics: options.hooks.metrics });

  const probeHosts = createHostAllowList({
    bindHost: host,
    names: [settings.hosts, options.opsHosts ?? rt.settings.opsHosts],
    ownAddresses: true,
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(securityHeaders);
  if (hooks !== undefined) app.use(hooks.router);
  app.use(PROBE_PATHS, (req, res, next) => {
    const given = req.get('host') ?? '';
    if (probeHosts.allows(given)) {
      next();
      return;
    }
    res
      .status(421)
      .set('cache-control', 'no-store')
      .type('text')
      .send(
        `unknown host "${hostName(given)}": add it to ROWBRIDGE_OPS_HOSTS to probe this server under that name\n`,
      );
  });
  app.get('/metrics', async (_req, res) => {
    const { contentType, body } = await metrics.render();
    res.type(contentType).set('cache-control', 'no-store').send(body);
  });
  app.get('/healthz', async (_req, res) => {
    const report = await health.check();
    res
      .status(report.status === 'ok' ? 200 : 503)
      .set('cache-control', 'no-store')
      .json(report);
  });
  app.get('/readyz', (_req, res) => {
    const ready = readiness.state === 'ready';
    res
      .status(ready ? 200 : 503)
      .set('cache-control', 'no-store')
      .json({ status: readiness.state });
  });
  if (dashboard !== undefined) app.use(dashboard.router);
  // Express's own handler would answer with the stack trace outside production.
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    rt.logger.error({ err }, 'ops server request failed');
    res.status(500).type('text').send('internal error: see the rowbridge log\n');
  });

  const server = createServer(app);
  try {
    await listen(server, options.port ?? 3000, host);
  } catch (err) {
    await dashboard?.close();
    await hooks?.close();
    if (ownsHealth) await health.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            // A scrape or a page stuck on Redis must not hold the process up.
            server.closeAllConnections();
            resolve();
          }, closeTimeoutMs);
        });
        await Promise.race([closed, late]);
        clearTimeout(timer);
        await dashboard?.close();
        await hooks?.close();
        if (ownsHealth) await health.close();
      })();
      return closing;
    },
  };
}
