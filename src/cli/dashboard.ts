import { text } from 'node:stream/consumers';
import { loadSettings } from '../../config/settings.ts';
import { createDashboardAccess } from '../ops/dashboard/dashboard-access.ts';
import { hashPassword } from '../ops/dashboard/password-hash.ts';
import { createHealthCheck, createReadiness } from '../ops/health.ts';
import { createMetrics } from '../ops/metrics.ts';
import { startOpsServer } from '../ops/ops-server.ts';
import { UsageError } from './args.ts';
import { defineCommand, parseCommand, usageFailure } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openReachableRuntime } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';

const DASHBOARD = defineCommand({
  name: 'dashboard',
  usage: [
    'dashboard [--port N] [--host H] [--allow-writes]',
    'dashboard --hash-password   (reads a password on stdin, prints its ROWBRIDGE_DASHBOARD_USERS hash)',
  ],
  description:
    'Serves runs, dead letters, queues, /metrics, /healthz and /readyz until SIGTERM/SIGINT.\n' +
    'Read-only unless --allow-writes; beyond loopback it needs ROWBRIDGE_DASHBOARD_TOKEN or _USERS.',
  options: {
    port: { type: 'string', value: 'N', help: 'TCP port (default 3000)' },
    host: { type: 'string', value: 'H', help: 'interface to listen on (default 127.0.0.1)' },
    'allow-writes': { type: 'boolean', help: 'allow queue actions (retry, remove, pause)' },
    'read-only': { type: 'boolean', help: 'the default; accepted for old scripts' },
    'hash-password': {
      type: 'boolean',
      help: 'hash a password read from stdin for ROWBRIDGE_DASHBOARD_USERS',
    },
  },
});

function port(value: string | undefined): number {
  if (value === undefined) return 3000;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535)
    throw new UsageError(`--port must be a port number from 0 to 65535, got "${value}"`);
  return n;
}

/** The first SIGTERM or SIGINT from now on; `dispose` stops listening (also on failure). */
function awaitSignal(): { signal: Promise<NodeJS.Signals>; dispose(): void } {
  let on: (signal: NodeJS.Signals) => void = () => undefined;
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    on = resolve;
  });
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
  return {
    signal,
    dispose() {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
    },
  };
}

/** `--hash-password`: the password from stdin (first line), never from argv where `ps` shows it. */
async function printPasswordHash(io: CliIo): Promise<number> {
  const password = (await text(process.stdin)).split(/\r?\n/)[0] ?? '';
  if (password.length < 12) {
    io.err('the password on stdin must be at least 12 characters long');
    return EXIT.usage;
  }
  io.out(hashPassword(password));
  return EXIT.ok;
}

/**
 * `dashboard`: serves the jobs, runs, dead letters and bull-board pages, `/metrics`,
 * `/healthz` and `/readyz` until SIGTERM/SIGINT. Works no queue itself, so it needs no
 * platform credentials (without them `/healthz` reports the API check as `config`).
 * Read-only unless `--allow-writes`; `--read-only` is accepted for old scripts.
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(DASHBOARD, args, io);
  if (typeof parsed === 'number') return parsed;
  let options: { port: number; host: string; allowWrites: boolean };
  try {
    if (parsed.values['hash-password'] === true) return await printPasswordHash(io);
    if (parsed.values['read-only'] === true && parsed.values['allow-writes'] === true)
      throw new UsageError('--read-only and --allow-writes contradict each other');
    options = {
      port: port(parsed.values.port),
      host: parsed.values.host ?? '127.0.0.1',
      allowWrites: parsed.values['allow-writes'] === true,
    };
  } catch (err) {
    return usageFailure(DASHBOARD, err, io);
  }
  try {
    // Checked before Redis is touched: an unprotected dashboard beyond loopback never starts.
    const settings = loadSettings(io.env);
    createDashboardAccess({
      token: settings.dashboardToken,
      users: settings.dashboardUsers,
      hosts: settings.dashboardHosts,
      bindHost: options.host,
    });
  } catch (err) {
    io.err(`rowbridge dashboard: ${(err as Error).message}`);
    return EXIT.usage;
  }
  // Redis unreachable: one line (cannot reach Redis at host:port (REDIS_URL)) and exit 1.
  const rt = await openReachableRuntime(io).catch((err: unknown) => reportFailure(err, io));
  if (typeof rt === 'number') return rt;
  const metrics = createMetrics();
  const health = createHealthCheck(rt);
  // Listening before the server starts: a SIGTERM during startup still stops it cleanly.
  const stop = awaitSignal();
  try {
    metrics.collectFrom(rt);
    const readiness = createReadiness();
    const server = await startOpsServer({ rt, metrics, readiness, health, dashboard: true, ...options });
    readiness.markReady();
    io.out(
      `rowbridge dashboard on ${server.url}/ (jobs ${server.url}/jobs, queues ${server.url}/queues, metrics ${server.url}/metrics)` +
        (options.allowWrites ? ', queue and job actions allowed' : ', read-only'),
    );
    rt.logger.info({ signal: await stop.signal }, 'dashboard stopping');
    readiness.markStopping();
    await server.close();
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    stop.dispose();
    await health.close();
    await metrics.close();
    await rt.close();
  }
}
