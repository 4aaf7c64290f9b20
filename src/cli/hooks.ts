/**
 * `rowbridge hooks serve`: a process that only receives webhook calls (`POST /hooks/JOB`,
 * with /healthz, /readyz and /metrics); workers elsewhere write the rows.
 * `rowbridge hooks show JOB`: what to set in the platform's workflow to call it.
 */
import path from 'node:path';
import { loadSettings } from '../../config/settings.ts';
import { hookHintKind, hookTriggerOf } from '../sync/job-spec/hook-trigger.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { loadJobSpec } from '../sync/job-spec/load-job-spec.ts';
import { UsageError } from './args.ts';
import { defineCommand, helpText, parseCommand, usageFailure } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { jobFileIn } from './job-file.ts';
import { openReachableRuntime, resolveJobArg } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';
import { onStopSignals } from './work-run.ts';

const SERVE = defineCommand({
  name: 'hooks serve',
  usage: ['hooks serve [--port N] [--host H]'],
  description:
    'Receives webhook calls (POST /hooks/JOB) and queues their hints for the workers, until SIGTERM/SIGINT.\n' +
    "Needs ROWBRIDGE_HOOK_TOKEN or ROWBRIDGE_HOOK_SECRET (or the job's own trigger.webhook.tokenEnv/secretEnv).",
  options: {
    port: { type: 'string', value: 'N', help: 'TCP port (default 3000)' },
    host: {
      type: 'string',
      value: 'H',
      help: 'interface to listen on (default 127.0.0.1; 0.0.0.0 for the platform)',
    },
  },
});

const SHOW = defineCommand({
  name: 'hooks show',
  usage: ['hooks show JOB [--url BASE]'],
  description:
    "Prints what to set in the platform's workflow to call this job's webhook, and a curl line to test it.",
  options: {
    url: {
      type: 'string',
      value: 'BASE',
      help: 'the address the platform reaches rowbridge at (default http://127.0.0.1:3000)',
    },
  },
  positionals: { min: 1, max: 1, label: 'JOB' },
});

const USAGE = `usage: rowbridge hooks serve [--port N] [--host H]\n       rowbridge hooks show JOB [--url BASE]\n`;

export async function main(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'serve') return serve(rest, io);
  if (sub === 'show') return show(rest, io);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.out(`${USAGE}\n${helpText(SERVE)}\n${helpText(SHOW)}`);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  io.err(`rowbridge hooks: unknown subcommand "${sub}"\n${USAGE}`);
  return EXIT.usage;
}

function portOf(value: string | undefined): number {
  if (value === undefined) return 3000;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535)
    throw new UsageError(`--port must be a port number from 0 to 65535, got "${value}"`);
  return n;
}

async function serve(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(SERVE, args, io);
  if (typeof parsed === 'number') return parsed;
  let port: number;
  try {
    port = portOf(parsed.values.port);
  } catch (err) {
    return usageFailure(SERVE, err, io);
  }
  const rt = await openReachableRuntime(io).catch((err: unknown) => reportFailure(err, io));
  if (typeof rt === 'number') return rt;
  const [{ createMetrics }, { startOpsServer }, { createHookMetrics }, { createReadiness }] =
    await Promise.all([
      import('../ops/metrics.ts'),
      import('../ops/ops-server.ts'),
      import('../ops/hooks/hook-metrics.ts'),
      import('../ops/health.ts'),
    ]);
  const metrics = createMetrics();
  try {
    metrics.collectFrom(rt);
    const readiness = createReadiness();
    const server = await startOpsServer({
      rt,
      metrics,
      readiness,
      port,
      host: parsed.values.host ?? '127.0.0.1',
      dashboard: false,
      hooks: { metrics: createHookMetrics(metrics.registry) },
    });
    readiness.markReady();
    io.out(`rowbridge hooks on ${server.url}/hooks/JOB (metrics ${server.url}/metrics)`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      onStopSignals(rt, io, resolve);
    });
    rt.logger.info({ signal }, 'hooks server stopping');
    readiness.markStopping();
    await server.close();
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await metrics.close();
    await rt.close();
  }
}

async function show(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(SHOW, args, io);
  if (typeof parsed === 'number') return parsed;
  try {
    const settings = loadSettings(io.env);
    const arg = resolveJobArg(parsed.positionals[0]!, io);
    const folder = arg.jobsDir ?? settings.jobsDir ?? path.join(io.cwd, 'jobs');
    const spec = await loadJobSpec(jobFileIn(folder, arg.name));
    const trigger = hookTriggerOf(spec);
    if (trigger === undefined) {
      io.err(
        `rowbridge hooks show: job ${spec.name} takes no webhooks: add trigger: { webhook: true } to ${jobFileIn(folder, arg.name)}`,
      );
      return EXIT.usage;
    }
    const base = (parsed.values.url ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
    const usesToken = trigger.secretEnv === undefined || trigger.tokenEnv !== undefined;
    const tokenVar = trigger.tokenEnv ?? 'ROWBRIDGE_HOOK_TOKEN';
    io.out(describeHook(spec, `${base}/hooks/${spec.name}`, usesToken ? tokenVar : undefined));
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  }
}

/** The workflow node's settings, in the order the platform's "Send API request" form asks. */
function describeHook(spec: JobSpec, url: string, tokenVar: string | undefined): string {
  const kind = hookHintKind(spec);
  const body =
    kind === 'rowId'
      ? {
          template: '{"rowId": "<Record ID>"}',
          sample: '{"rowId": "ROW_ID"}',
          what: "insert the row's Record ID (rowid) field",
        }
      : kind === 'key'
        ? {
            template: '{"key": "<key>"}',
            sample: '{"key": "KEY"}',
            what: `insert the field holding the source's ${spec.source.type === 'postgres' || spec.source.type === 'mysql' ? spec.source.keyColumn : 'key'}`,
          }
        : {
            template: '{"<column>": "<field>", ...}',
            sample: '{}',
            what: "build the record from the row's fields, named as the source names its columns (or send an array of records)",
          };
  const auth = tokenVar === undefined ? undefined : `Authorization: Bearer <the value of ${tokenVar}>`;
  const lines = [
    `Webhook of job ${spec.name}: set in the worksheet's workflow a "Send API request" node:`,
    '',
    `  Method:  POST`,
    `  URL:     ${url}`,
    ...(auth === undefined ? [] : [`  Header:  ${auth}`]),
    `  Header:  Content-Type: application/json`,
    `  Body:    ${body.template}`,
    `           (${body.what})`,
    '',
    'Test it:',
    `  curl -sS -X POST '${url}' \\`,
    ...(tokenVar === undefined
      ? [`    -H 'webhook-id: ...' -H 'webhook-timestamp: ...' -H 'webhook-signature: v1,...' \\`]
      : [`    -H "Authorization: Bearer $${tokenVar}" \\`]),
    `    -H 'Content-Type: application/json' -d '${body.sample}'`,
    '',
    'Answers: 202 {"deliveryId", "queued"} queued; 200 {"duplicate": true} a delivery seen before;',
    '400 a body refused, 401 a credential refused, 404 no such job with trigger.webhook. See docs/webhooks.md.',
  ];
  return lines.join('\n');
}
