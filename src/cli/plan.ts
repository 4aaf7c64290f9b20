import { planRun } from '../sync/check/plan-run.ts';
import type { RunPlan } from '../sync/check/plan-run.ts';
import { createProgress } from '../ops/progress.ts';
import { openSource } from '../sync/read/open-source.ts';
import { runTwoWay } from '../sync/two-way/two-way-run.ts';
import type { TwoWayReport } from '../sync/two-way/two-way-run.ts';
import { defineCommand, parseCommand } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { resolveJobArg, withRuntime } from './open-runtime.ts';

const PLAN = defineCommand({
  name: 'plan',
  usage: ['plan JOB [--json]'],
  description:
    'A dry run: reads the source, maps every row and compares with the worksheet, then says\n' +
    'what a run would create, update, delete and reject. A two-way job: the records matched,\n' +
    'on one side only and sharing a key, the writes on each side and their API calls.\n' +
    'Writes nothing. Exit 0, 1 failure.',
  options: { json: { type: 'boolean', help: 'print the plan as JSON' } },
  positionals: { min: 1, max: 1, label: 'job' },
});

function formatPlan(job: string, plan: RunPlan): string {
  const a = plan.apiCalls;
  const lines = [
    `plan ${job}: read ${plan.read}`,
    `  create     ${plan.create}`,
    `  update     ${plan.update}`,
    `  unchanged  ${plan.unchanged}`,
    `  skip       ${plan.skip}`,
    `  delete     ${plan.delete}${plan.deleteRefused ? ' (over the safety threshold: the run would refuse; --force to allow)' : ''}`,
    `  reject     ${plan.reject}`,
    `  API calls  ${a.total} (reads ${a.reads}, batch creates ${a.batchCreates}, batch updates ${a.batchUpdates}, single updates ${a.singleUpdates}, batch deletes ${a.batchDeletes})`,
  ];
  for (const r of plan.rejects) lines.push(`  rejected ${r.position}: ${r.message}`);
  for (const w of plan.warnings) lines.push(`  warning: ${w}`);
  for (const { position, values } of plan.sample) {
    const shown = Object.entries(values).map(([field, value]) => `${field}=${JSON.stringify(value)}`);
    lines.push(`  sample ${position}: ${shown.join(', ')}`);
  }
  return lines.join('\n');
}

function formatTwoWay(job: string, r: TwoWayReport, other: string): string {
  const p = r.planned!;
  const a = p.apiCalls;
  const side = (s: { create: number; update: number; delete: number }) =>
    `create ${s.create}, update ${s.update}, delete ${s.delete}`;
  return [
    `plan ${job} (two-way): read ${r.read.source} ${other} records, ${r.read.worksheet} worksheet rows`,
    `  linked         ${r.counts.linked}`,
    `  matched        ${r.counts.matched} (by key, not linked yet)`,
    `  source-only    ${r.counts.sourceOnly}`,
    `  worksheet-only ${r.counts.worksheetOnly}`,
    `  ambiguous      ${r.counts.ambiguous} (keys held by more than one record: not created)`,
    `  worksheet      ${side(p.worksheet)}`,
    `  ${other === 'table' ? 'table       ' : 'source sheet'}   ${side(p.source)}`,
    `  conflicts      ${p.conflicts}, held deletes ${p.heldDeletes}, kept ${p.kept}`,
    `  API calls      ${a.total} (reads ${a.reads}, batch creates ${a.batchCreates}, single updates ${a.singleUpdates}, batch deletes ${a.batchDeletes})`,
  ].join('\n');
}

/** `plan JOB`: a dry run with the same mapping code; writes nothing. */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(PLAN, args, io);
  if (typeof parsed === 'number') return parsed;
  const job = resolveJobArg(parsed.positionals[0]!, io);
  const options = {
    quiet: parsed.values.json === true,
    json: parsed.values.json === true,
    interactive: true,
    ...(job.jobsDir ? { jobsDir: job.jobsDir } : {}),
  };
  return withRuntime(io, options, async (rt) => {
    // The one setup of a run (sync/prepare/prepare-run.ts), without a run to store it with.
    const { spec, file, client, prepared } = await rt.prepareRun(job.name);
    if (spec.target?.mode === 'two-way') {
      const deps = { spec, file, client, prepared: prepared!, redis: rt.redis, prefix: rt.statePrefix };
      const clientFor = (prefix?: string) => rt.clientFor(prefix);
      const report = await runTwoWay({ ...deps, env: io.env, log: rt.logger, clientFor }, true);
      io.out(
        parsed.values.json === true
          ? JSON.stringify(report, null, 2)
          : formatTwoWay(job.name, report, spec.source.type === 'worksheet' ? 'source worksheet' : 'table'),
      );
      return EXIT.ok;
    }
    if (spec.sink !== undefined) {
      // A pull job writes every row it reads to its sink: the plan is the count.
      let read = 0;
      for await (const _record of await openSource(rt, spec, file, {}, 'plan')) read += 1;
      const pull = { read, write: read, sink: spec.sink.type };
      io.out(
        parsed.values.json === true
          ? JSON.stringify(pull, null, 2)
          : `plan ${job.name}: read ${read}, write ${read} to the ${spec.sink.type} sink`,
      );
      return EXIT.ok;
    }
    const source = await openSource(rt, spec, file, {}, 'plan');
    const progress = createProgress({
      label: `plan ${job.name}`,
      isTty: io.isTty && parsed.values.json !== true,
      write: (t) => process.stderr.write(t),
      logger: rt.logger,
    });
    const plan = await planRun(spec, prepared!, source, {
      ...rt.syncDeps(client, rt.logger),
      onProgress: (p, read) =>
        progress.update({
          read,
          written: p.create + p.update,
          unchanged: p.unchanged + p.skip,
          deadLettered: p.reject,
        }),
    });
    progress.done();
    io.out(parsed.values.json === true ? JSON.stringify(plan, null, 2) : formatPlan(job.name, plan));
    return EXIT.ok;
  });
}
