/**
 * `rowbridge deletes list|approve|reject JOB`: the deletes a two-way run held back because
 * they were more than `options.deleteThreshold` of a side (docs/two-way.md). An approved
 * delete is made by the job's next run; a rejected one is undone: the record is unlinked,
 * and the next run creates it again on the side it was deleted from.
 */
import type { PendingDelete } from '../sync/two-way/link-store.ts';
import { pendingDeleteId } from '../sync/two-way/link-store.ts';
import { defineCommand } from './command.ts';
import type { CommandSpec } from './command.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openJobState, runStateCommand } from './two-way-state.ts';
import type { StateAction } from './two-way-state.ts';

const job = { min: 1, max: Infinity, label: 'job (then IDs)' } as const;

const SUBCOMMANDS = {
  list: defineCommand({
    name: 'deletes list',
    usage: ['deletes list JOB [--json]'],
    description: 'The deletes of a two-way job waiting for approval, one line each.',
    options: { json: { type: 'boolean', help: 'print them as JSON' } },
    positionals: { min: 1, max: 1, label: 'job' },
  }),
  approve: defineCommand({
    name: 'deletes approve',
    usage: ['deletes approve JOB [ID...]'],
    description:
      "Approves the job's pending deletes (all, or the IDs given): its next run makes them.\n" +
      'Exit 0 approved, 1 an ID that is not pending, 64 misuse.',
    options: {},
    positionals: job,
  }),
  reject: defineCommand({
    name: 'deletes reject',
    usage: ['deletes reject JOB [ID...]'],
    description:
      "Rejects the job's pending deletes (all, or the IDs given): each record is kept, and the\n" +
      'next run creates it again on the side it was deleted from. Exit 0, 1 an ID not pending, 64 misuse.',
    options: {},
    positionals: job,
  }),
} satisfies Record<string, CommandSpec>;

function line(d: PendingDelete): string {
  const what =
    d.side === 'worksheet'
      ? `delete worksheet row ${d.rowId} (table record ${d.key} is gone)`
      : `delete table record ${d.key} (worksheet row ${d.rowId} is gone)`;
  return `${pendingDeleteId(d)}  ${what}  held since ${d.at}${d.approved === true ? '  approved' : ''}`;
}

/** The pending deletes named (all when none is), or the IDs that are not pending. */
function pick(
  all: ReadonlyMap<string, PendingDelete>,
  ids: readonly string[],
): { chosen: PendingDelete[] } | { unknown: string[] } {
  if (ids.length === 0) return { chosen: [...all.values()] };
  const unknown = ids.filter((id) => !all.has(id));
  return unknown.length > 0 ? { unknown } : { chosen: ids.map((id) => all.get(id)!) };
}

const decide =
  (approve: boolean): StateAction =>
  async (parsed, rt, io) => {
    const [name, ...ids] = parsed.positionals as [string, ...string[]];
    const store = await openJobState(rt, name);
    const picked = pick(await store.pendingDeletes(), ids);
    if ('unknown' in picked) {
      io.err(
        `job ${name} has no pending delete ${picked.unknown.join(', ')} (\`${cmd(io)} deletes list ${name}\`)`,
      );
      return EXIT.failure;
    }
    const { chosen } = picked;
    if (approve) await store.savePendingDeletes(chosen.map((d) => ({ ...d, approved: true })));
    else {
      // Unlinked, the surviving record is matched by key at the next run, finds nothing, and is created.
      await store.dropLinks(chosen);
      await store.dropPendingDeletes(chosen.map(pendingDeleteId));
    }
    io.out(
      chosen.length === 0
        ? `job ${name} has no pending deletes`
        : approve
          ? `${chosen.length} delete(s) of job ${name} approved: the next run makes them (\`${cmd(io)} run ${name}\`)`
          : `${chosen.length} delete(s) of job ${name} rejected: the next run creates those records again where they were deleted`,
    );
    return EXIT.ok;
  };

const actions: Record<keyof typeof SUBCOMMANDS, StateAction> = {
  async list(parsed, rt, io) {
    const name = parsed.positionals[0]!;
    const all = [...(await (await openJobState(rt, name)).pendingDeletes()).values()].sort((a, b) =>
      pendingDeleteId(a) < pendingDeleteId(b) ? -1 : 1,
    );
    if (parsed.values.json === true) io.out(JSON.stringify(all, null, 2));
    else if (all.length === 0) io.out(`job ${name} has no pending deletes`);
    else {
      const bySide = (side: PendingDelete['side']) => all.filter((d) => d.side === side).length;
      io.out(
        `${all.length} pending delete(s) of job ${name}: ${bySide('worksheet')} in the worksheet, ${bySide('source')} in the table`,
      );
      for (const d of all) io.out(line(d));
    }
    return EXIT.ok;
  },
  approve: decide(true),
  reject: decide(false),
};

/** `rowbridge deletes list|approve|reject JOB`. */
export function main(args: string[], io: CliIo): Promise<number> {
  return runStateCommand('deletes', SUBCOMMANDS, actions, args, io);
}
