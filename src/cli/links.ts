/**
 * `rowbridge links export JOB --csv`: which table record each worksheet row of a two-way
 * job is linked to, for a person to check or to keep. Values are not in it: a link keeps
 * hashes only (docs/two-way.md).
 */
import { formulaSafe } from '../sync/state/dead-letter-csv.ts';
import type { Link } from '../sync/two-way/link-store.ts';
import { defineCommand } from './command.ts';
import type { CommandSpec } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openJobState, runStateCommand } from './two-way-state.ts';
import type { StateAction } from './two-way-state.ts';

const SUBCOMMANDS = {
  export: defineCommand({
    name: 'links export',
    usage: ['links export JOB [--csv]'],
    description:
      'The links of a two-way job as CSV on stdout: table key, worksheet row id and state\n' +
      '(linked; pending: a run was stopped while writing it; gone-source / gone-worksheet:\n' +
      'deleted on that side with deletes: none).',
    options: { csv: { type: 'boolean', help: 'CSV (the only format; accepted for clarity)' } },
    positionals: { min: 1, max: 1, label: 'job' },
  }),
} satisfies Record<string, CommandSpec>;

const cell = (text: string) => {
  const safe = formulaSafe(text);
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
};

function state(link: Link): string {
  if (link.gone !== undefined) return `gone-${link.gone}`;
  return link.pending === undefined ? 'linked' : 'pending';
}

const actions: Record<keyof typeof SUBCOMMANDS, StateAction> = {
  async export(parsed, rt, io) {
    const links = [...(await (await openJobState(rt, parsed.positionals[0]!)).links()).values()];
    const numeric = links.every((l) => /^\d+$/.test(l.key));
    links.sort((a, b) =>
      numeric ? Number(a.key) - Number(b.key) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    );
    const lines = [
      'table_key,row_id,state',
      ...links.map((l) => [l.key, l.rowId, state(l)].map(cell).join(',')),
    ];
    io.out(lines.join('\n'));
    return EXIT.ok;
  },
};

/** `rowbridge links export JOB --csv`. */
export function main(args: string[], io: CliIo): Promise<number> {
  return runStateCommand('links', SUBCOMMANDS, actions, args, io);
}
