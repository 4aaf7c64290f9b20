/**
 * `rowbridge conflicts list|show|resolve`: the two-way conflicts waiting for a person
 * (docs/two-way.md). A conflict is named `JOB/ID` (`contacts/fields:12`); a resolution is
 * stored with the conflict and written by the job's next run, which then forgets it.
 */
import type { Runtime } from '../queue/runtime-types.ts';
import type { Conflict } from '../sync/two-way/link-store.ts';
import { UsageError } from './args.ts';
import { defineCommand } from './command.ts';
import type { CommandSpec } from './command.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { jobNames, openJobState, runStateCommand } from './two-way-state.ts';
import type { StateAction } from './two-way-state.ts';

const SUBCOMMANDS = {
  list: defineCommand({
    name: 'conflicts list',
    usage: ['conflicts list [JOB] [--json]'],
    description: 'The conflicts of a two-way job (of every job in jobs/ without JOB), one line each.',
    options: { json: { type: 'boolean', help: 'print the conflicts as JSON' } },
    positionals: { max: 1, label: 'job' },
  }),
  show: defineCommand({
    name: 'conflicts show',
    usage: ['conflicts show ID [--json]'],
    description:
      'One conflict: each field with the worksheet value, the table value and the last synced\n' +
      'value, when each side last changed the record; or the records sharing a key.',
    options: { json: { type: 'boolean', help: 'print the conflict as JSON' } },
    positionals: { min: 1, max: 1, label: 'conflict (JOB/ID from conflicts list)' },
  }),
  resolve: defineCommand({
    name: 'conflicts resolve',
    usage: ['conflicts resolve ID --take source|worksheet|VALUE'],
    description:
      "Decides a field conflict: the table's value (source), the worksheet's, or VALUE on both\n" +
      "sides (one field only). The job's next run writes it. Exit 0 stored, 1 unknown conflict\n" +
      'or one that records sharing a key (fix the key on one side instead), 64 misuse.',
    options: { take: { type: 'string', value: 'source|worksheet|VALUE', help: 'what both sides get' } },
    positionals: { min: 1, max: 1, label: 'conflict (JOB/ID from conflicts list)' },
  }),
} satisfies Record<string, CommandSpec>;

type Found = { job: string; conflict: Conflict } | { error: string };

/** A conflict by `JOB/ID`, or by its bare ID when one job only has it. */
async function find(rt: Runtime, ref: string, io: CliIo): Promise<Found> {
  const slash = ref.indexOf('/');
  const jobs = slash > 0 ? [ref.slice(0, slash)] : await jobNames(rt);
  const id = slash > 0 ? ref.slice(slash + 1) : ref;
  const hits: Array<{ job: string; conflict: Conflict }> = [];
  for (const job of jobs) {
    const conflict = (await (await openJobState(rt, job)).conflicts()).get(id);
    if (conflict !== undefined) hits.push({ job, conflict });
  }
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1)
    return { error: `${id} is a conflict of ${hits.map((h) => h.job).join(' and ')}: name it JOB/${id}` };
  return { error: `no conflict ${ref} (\`${cmd(io)} conflicts list\` lists them)` };
}

function takeText(take: NonNullable<Conflict['take']>): string {
  if ('source' in take) return 'the table value';
  if ('worksheet' in take) return 'the worksheet value';
  return JSON.stringify(take.value);
}

function summary(job: string, c: Conflict): string {
  const what =
    c.kind === 'fields'
      ? `fields ${(c.fields ?? []).map((f) => f.field).join(', ')}`
      : `key shared by ${c.records?.source.length ?? 0} table record(s), ${c.records?.worksheet.length ?? 0} row(s)`;
  const state = c.take === undefined ? '' : `  resolved: ${takeText(c.take)}, written at the next run`;
  return `${job}/${c.id}  key ${JSON.stringify(c.matchKey)}  ${what}  since ${c.at}${state}`;
}

function details(job: string, c: Conflict, io: CliIo): string {
  const lines = [`conflict ${job}/${c.id} (job ${job}), raised ${c.at}`];
  if (c.kind === 'ambiguous') {
    const list = (ids: readonly string[] | undefined) => (ids?.length ? ids.join(', ') : '(none)');
    lines.push(
      `  key ${JSON.stringify(c.matchKey)} is held by more than one record, or is empty:`,
      `  table records (key column)  ${list(c.records?.source)}`,
      `  worksheet rows              ${list(c.records?.worksheet)}`,
      '  these records are not created on the other side until each key value is held once:',
      '  change or fill the key on one side (resolve does not apply)',
    );
    return lines.join('\n');
  }
  lines.push(
    `  record with key ${JSON.stringify(c.matchKey)}: table key ${c.key ?? '?'}, worksheet row ${c.rowId ?? '?'}`,
    `  worksheet changed it at  ${c.worksheetUpdatedAt ?? '(unknown)'}`,
    `  table changed it at      ${c.sourceUpdatedAt ?? '(unknown)'}`,
  );
  for (const f of c.fields ?? []) {
    lines.push(
      `  ${f.field}`,
      `    worksheet    ${JSON.stringify(f.worksheet)}`,
      `    table        ${JSON.stringify(f.source)}`,
      `    last synced  ${
        f.last !== undefined
          ? JSON.stringify(f.last)
          : f.base === undefined
            ? '(none: the records were never synced)'
            : '(not kept: only conflict: manual fields keep their last synced value)'
      }`,
    );
  }
  lines.push(
    c.take === undefined
      ? `  resolve: ${cmd(io)} conflicts resolve ${job}/${c.id} --take source|worksheet|VALUE`
      : `  resolved: ${takeText(c.take)}, written at the next run of ${job}`,
  );
  return lines.join('\n');
}

const actions: Record<keyof typeof SUBCOMMANDS, StateAction> = {
  async list(parsed, rt, io) {
    const jobs = parsed.positionals[0] === undefined ? await jobNames(rt) : [parsed.positionals[0]];
    const all: Array<{ job: string; conflict: Conflict }> = [];
    for (const job of jobs)
      for (const conflict of (await (await openJobState(rt, job)).conflicts()).values())
        all.push({ job, conflict });
    all.sort((a, b) => (a.conflict.at < b.conflict.at ? -1 : a.conflict.at > b.conflict.at ? 1 : 0));
    if (parsed.values.json === true) {
      io.out(JSON.stringify(all, null, 2));
      return EXIT.ok;
    }
    if (all.length === 0) io.out(`no conflicts${jobs.length === 1 ? ` in job ${jobs[0]}` : ''}`);
    for (const { job, conflict } of all) io.out(summary(job, conflict));
    return EXIT.ok;
  },
  async show(parsed, rt, io) {
    const found = await find(rt, parsed.positionals[0]!, io);
    if ('error' in found) {
      io.err(found.error);
      return EXIT.failure;
    }
    io.out(
      parsed.values.json === true ? JSON.stringify(found, null, 2) : details(found.job, found.conflict, io),
    );
    return EXIT.ok;
  },
  async resolve(parsed, rt, io) {
    const take = parsed.values.take;
    if (typeof take !== 'string') throw new UsageError('--take source|worksheet|VALUE is required');
    const found = await find(rt, parsed.positionals[0]!, io);
    if ('error' in found) {
      io.err(found.error);
      return EXIT.failure;
    }
    const { job, conflict } = found;
    if (conflict.kind !== 'fields') {
      io.err(
        `${job}/${conflict.id}: records sharing the key ${JSON.stringify(conflict.matchKey)} cannot be resolved by a value: change or fill the key on one side`,
      );
      return EXIT.failure;
    }
    const fields = conflict.fields ?? [];
    if (take !== 'source' && take !== 'worksheet' && fields.length !== 1) {
      io.err(
        `${job}/${conflict.id}: --take VALUE sets one field, and this conflict has ${fields.length} (${fields.map((f) => f.field).join(', ')}): take source or worksheet`,
      );
      return EXIT.failure;
    }
    const resolution: NonNullable<Conflict['take']> =
      take === 'source' ? { source: true } : take === 'worksheet' ? { worksheet: true } : { value: take };
    await (await openJobState(rt, job)).saveConflicts([{ ...conflict, take: resolution }]);
    io.out(
      `${job}/${conflict.id}: ${fields.map((f) => f.field).join(', ')} will get ${takeText(resolution)} on both sides at the next run of ${job} (\`${cmd(io)} run ${job}\`)`,
    );
    return EXIT.ok;
  },
};

/** `rowbridge conflicts list|show|resolve`. */
export function main(args: string[], io: CliIo): Promise<number> {
  return runStateCommand('conflicts', SUBCOMMANDS, actions, args, io);
}
