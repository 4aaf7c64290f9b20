/**
 * What `conflicts`, `deletes` and `links` share: their subcommands parsed the way `dlq`
 * parses its own (0 ok, 1 failure, 64 misuse), and a two-way job's state opened on the
 * runtime's Redis under the same prefix a run writes it.
 */
import { readdir } from 'node:fs/promises';
import type { Runtime } from '../queue/runtime-types.ts';
import { createLinkStore } from '../sync/two-way/link-store.ts';
import type { LinkStore } from '../sync/two-way/link-store.ts';
import { UsageError } from './args.ts';
import { helpText, parseCommand, usageFailure } from './command.ts';
import type { CommandSpec } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { withRuntime } from './open-runtime.ts';

/** One subcommand's work, given the runtime; resolves to the exit code. */
export type StateAction = (
  parsed: { values: Readonly<Record<string, string | boolean | undefined>>; positionals: string[] },
  rt: Runtime,
  io: CliIo,
) => Promise<number>;

/** Parses `GROUP SUB ARGS...` and runs the subcommand's action on a reachable runtime. */
export async function runStateCommand(
  group: string,
  subcommands: Record<string, CommandSpec>,
  actions: Record<string, StateAction>,
  args: string[],
  io: CliIo,
): Promise<number> {
  const usage = `usage: rowbridge ${group} <subcommand>\n\n${Object.values(subcommands)
    .map((spec) => `  ${spec.usage?.[0] ?? spec.name}`)
    .join('\n')}\n\nrowbridge ${group} <subcommand> --help lists its options.`;
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    if (sub === undefined) io.err(`${group}: which subcommand?\n\n${usage}`);
    else io.out(usage);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  const spec = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
  const action = actions[sub];
  if (spec === undefined || action === undefined) {
    io.err(`${group}: unknown subcommand "${sub}"\n\n${usage}`);
    return EXIT.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`${helpText(spec)}\n${usage}`);
    return EXIT.ok;
  }
  const parsed = parseCommand(spec, rest, io);
  if (typeof parsed === 'number') return parsed;
  return withRuntime(io, { quiet: true }, async (rt) => {
    try {
      return await action(parsed, rt, io);
    } catch (err) {
      if (err instanceof UsageError) return usageFailure(spec, err, io);
      throw err;
    }
  });
}

/** The two-way state of `job`, its stored format checked (and never stamped: a run does that). */
export async function openJobState(rt: Runtime, job: string): Promise<LinkStore> {
  const store = createLinkStore({ redis: rt.redis, prefix: rt.statePrefix, job });
  await store.checkFormat({ readOnly: true });
  return store;
}

/** The names of the jobs in the jobs folder (a job's name is its file's). */
export async function jobNames(rt: Runtime): Promise<string[]> {
  const files = await readdir(rt.jobsDir).catch(() => [] as string[]);
  return files
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => f.replace(/\.ya?ml$/, ''))
    .sort();
}
