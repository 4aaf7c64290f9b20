/**
 * `rowbridge cdc setup|check|status|drop JOB`: the PostgreSQL side of a postgres-cdc job
 * (docs/cdc.md), and `rowbridge run JOB [--resnapshot]` for such a job (`runCdc`): the
 * stream read until it has caught up, in this process, then exit.
 */
import path from 'node:path';
import pg from 'pg';
import { loadSettings } from '../../config/settings.ts';
import { cdcProblems, dropCdc, problemForJob, setupCdc, slotState } from '../sync/cdc/cdc-admin.ts';
import { createCdcState } from '../sync/cdc/cdc-state.ts';
import { loadJobSpec } from '../sync/job-spec/load-job-spec.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { requireEnvUrl } from '../sync/sources/env-refs.ts';
import { redactSecrets, urlSecrets } from '../sync/sources/redact.ts';
import type { PostgresCdcSourceSpec } from '../sync/sources/source-spec.ts';
import { defineCommand, helpText, parseCommand } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { jobFileIn } from './job-file.ts';
import { openReachableRuntime, resolveJobArg } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';
import { onStopSignals } from './work-run.ts';

const SUBCOMMANDS = ['setup', 'check', 'status', 'drop'] as const;
type Sub = (typeof SUBCOMMANDS)[number];

const CDC = defineCommand({
  name: 'cdc',
  usage: SUBCOMMANDS.map((s) => `cdc ${s} JOB${s === 'status' ? ' [--json]' : ''}`),
  description:
    'setup: create the publication and the logical slot (pgoutput) of a postgres-cdc job.\n' +
    'check: say what stops change capture (wal_level, REPLICATION, primary key, slot); exit 1 if anything.\n' +
    "status: the slot's position, lag in bytes and seconds, who streams it.\n" +
    'drop: drop the slot (the server stops keeping WAL for it) and the publication.',
  options: { json: { type: 'boolean', help: 'status as JSON' } },
  positionals: { min: 2, max: 2, label: 'JOB' },
});

async function loadCdcJob(arg: string, io: CliIo): Promise<{ spec: JobSpec; source: PostgresCdcSourceSpec }> {
  const settings = loadSettings(io.env);
  const job = resolveJobArg(arg, io);
  const folder = job.jobsDir ?? settings.jobsDir ?? path.join(io.cwd, 'jobs');
  const spec = await loadJobSpec(jobFileIn(folder, job.name));
  if (spec.source.type !== 'postgres-cdc')
    throw new Error(`job ${spec.name} does not read postgres-cdc (its source.type is ${spec.source.type})`);
  return { spec, source: spec.source };
}

async function withClient<T>(
  io: CliIo,
  source: PostgresCdcSourceSpec,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const url = requireEnvUrl(io.env, source.urlEnv, 'postgres-cdc source');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } catch (err) {
    // The URL's password never reaches the terminal: the original is not kept as the cause.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(redactSecrets((err as Error).message, urlSecrets(url)));
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(CDC, args, io);
  if (typeof parsed === 'number') return parsed;
  const [sub, arg] = parsed.positionals as [string, string];
  if (!SUBCOMMANDS.includes(sub as Sub)) {
    io.err(`rowbridge cdc: unknown subcommand "${sub}" (one of ${SUBCOMMANDS.join(', ')})\n${helpText(CDC)}`);
    return EXIT.usage;
  }
  try {
    const { spec, source } = await loadCdcJob(arg, io);
    switch (sub as Sub) {
      case 'setup': {
        const done = await withClient(io, source, (c) => setupCdc(c, source));
        io.out(done.join('\n'));
        return EXIT.ok;
      }
      case 'check': {
        const problems = await withClient(io, source, (c) => cdcProblems(c, source, { setupDone: false }));
        if (problems.length === 0) io.out(`job ${spec.name}: ready for change capture (slot ${source.slot})`);
        else
          io.out(
            `job ${spec.name}: change capture cannot run:\n${problems.map((p) => `  - ${problemForJob(p, spec.name)}`).join('\n')}`,
          );
        return problems.length === 0 ? EXIT.ok : EXIT.failure;
      }
      case 'status':
        return status(spec, source, parsed.values.json === true, io);
      case 'drop': {
        const done = await withClient(io, source, (c) => dropCdc(c, source));
        io.out(done.join('\n'));
        return EXIT.ok;
      }
    }
  } catch (err) {
    return reportFailure(err, io);
  }
}

async function status(
  spec: JobSpec,
  source: PostgresCdcSourceSpec,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const slot = await withClient(io, source, (c) => slotState(c, source.slot));
  const rt = await openReachableRuntime(io);
  try {
    const stream = await createCdcState({ redis: rt.redis, prefix: rt.statePrefix }).status(spec.name);
    if (json) {
      io.out(JSON.stringify({ job: spec.name, slot: slot ?? null, stream: stream ?? null }, null, 2));
      return EXIT.ok;
    }
    const lines = [`job ${spec.name}, slot ${source.slot}, publication ${source.publication}`];
    if (slot === undefined) lines.push('  slot: missing (rowbridge cdc setup JOB)');
    else
      lines.push(
        `  slot: ${slot.walStatus === 'lost' ? `INVALIDATED (rowbridge run ${spec.name} --resnapshot)` : slot.active ? 'streaming' : 'idle'}, confirmed ${slot.confirmedLsn ?? '-'}, lag ${slot.lagBytes ?? '-'} bytes, WAL kept ${slot.retainedBytes ?? '-'} bytes`,
      );
    if (stream !== undefined)
      lines.push(
        `  stream: ${stream.state}${stream.holder ? ` by ${stream.holder}` : ''}, lag ${stream.lagSeconds ?? 0} s, ${stream.changes ?? 0} changes, at ${stream.updatedAt}${stream.error ? `\n  error: ${stream.error}` : ''}`,
      );
    io.out(lines.join('\n'));
    return EXIT.ok;
  } finally {
    await rt.close();
  }
}

const RUN_CDC = defineCommand({
  name: 'run',
  usage: ['run JOB [--resnapshot] [--json]'],
  description:
    'A postgres-cdc job: takes the snapshot on its first run, then writes the changes streamed until it has caught up, and exits\n' +
    '(0 ok, 2 dead letters, 75 another consumer holds the slot). Workers stream it continuously.',
  options: {
    resnapshot: { type: 'boolean', help: 'start over from a new slot and snapshot (an invalidated slot)' },
    json: { type: 'boolean', help: 'the summary as JSON' },
  },
  positionals: { min: 1, max: 1, label: 'JOB' },
});

/** Whether `run ARGS` names a postgres-cdc job (which `runCdc` runs). */
export async function isCdcRun(args: readonly string[], io: CliIo): Promise<boolean> {
  if (args.includes('--resnapshot')) return true;
  const arg = args.find((a) => !a.startsWith('-'));
  if (arg === undefined) return false;
  return loadCdcJob(arg, io).then(
    () => true,
    () => false,
  );
}

/** `run JOB [--resnapshot]` of a postgres-cdc job: the stream until caught up, here. */
export async function runCdc(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(RUN_CDC, args, io);
  if (typeof parsed === 'number') return parsed;
  const job = parsed.positionals[0]!;
  const resnapshot = parsed.values.resnapshot === true;
  const json = parsed.values.json === true;
  const rt = await openReachableRuntime(io).catch((err: unknown) => reportFailure(err, io));
  if (typeof rt === 'number') return rt;
  const stop = new AbortController();
  onStopSignals(rt, io, () => stop.abort());
  try {
    const { runCdcConsumer } = await import('../queue/cdc-consumer.ts');
    const summary = await runCdcConsumer(rt, {
      job: resolveJobArg(job, io).name,
      mode: 'drain',
      holder: `run-${process.pid}`,
      resnapshot,
      signal: stop.signal,
    });
    if (summary.busy !== undefined) {
      io.err(
        `rowbridge run: another consumer (${summary.busy}) streams this job's slot; it is writing the changes`,
      );
      return EXIT.busy;
    }
    if (json) io.out(JSON.stringify(summary));
    else
      io.out(
        `run ${summary.runId}: ${summary.snapshotRows} snapshot rows, ${summary.changes} changes written, ${summary.deleted} deleted, ${summary.deadLettered} dead-lettered`,
      );
    return summary.deadLettered > 0 ? EXIT.deadLettered : EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}
