/**
 * What each `dlq` subcommand does once its arguments are parsed: list, show, export,
 * purge and replay over an injected dead-letter store.
 */
import { createInterface } from 'node:readline/promises';
import { ERROR_CATEGORIES } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';
import { formatCounts, formatDeadLetter, formatDeadLetterTable } from '../sync/state/dead-letter-format.ts';
import type { DeadLetterEntry } from '../sync/state/dead-letter-entry.ts';
import type {
  DeadLetterFilter,
  DeadLetterSelection,
  DeadLetterStore,
} from '../sync/state/dead-letter-store.ts';
import { positiveInt, UsageError } from './args.ts';
import { applyFixedFile, exportDeadLetters, fixedFileEncoding } from './dlq-file.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';

/** The options of every dlq subcommand (each accepts a subset). */
export interface DlqArgs {
  values: {
    category?: string;
    job?: string;
    run?: string;
    limit?: string;
    out?: string;
    file?: string;
    encoding?: string;
    json?: boolean;
    csv?: boolean;
    yes?: boolean;
  };
  positionals: string[];
}

/** What the actions need: the store (opened per use), the replay and a yes/no prompt. */
export interface DlqContext {
  withStore<T>(io: CliIo, use: (store: DeadLetterStore) => Promise<T>): Promise<T>;
  replay(selection: DeadLetterSelection, io: CliIo): Promise<number>;
  confirm(question: string, io: CliIo): Promise<boolean>;
}

const DEFAULT_LIMIT = 50;

function filterOf({ values }: DlqArgs): DeadLetterFilter {
  const filter: DeadLetterFilter = {};
  if (values.category !== undefined) {
    if (!(ERROR_CATEGORIES as readonly string[]).includes(values.category))
      throw new UsageError(
        `unknown category "${values.category}"; categories: ${ERROR_CATEGORIES.join(', ')}`,
      );
    filter.category = values.category as ErrorCategory;
  }
  if (values.job !== undefined) filter.job = values.job;
  if (values.run !== undefined) filter.runId = values.run;
  return filter;
}

function describe(filter: DeadLetterFilter): string {
  const parts = [
    filter.category === undefined ? '' : `category ${filter.category}`,
    filter.job === undefined ? '' : `job ${filter.job}`,
    filter.runId === undefined ? '' : `run ${filter.runId}`,
  ].filter(Boolean);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

const plural = (n: number) => `${n} dead letter${n === 1 ? '' : 's'}`;

async function collect(store: DeadLetterStore, filter: DeadLetterFilter, limit: number) {
  const entries: DeadLetterEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({
      ...filter,
      limit: Math.min(limit - entries.length, 1000),
      ...(cursor === undefined ? {} : { cursor }),
    });
    entries.push(...page.entries);
    cursor = page.next;
  } while (cursor !== undefined && entries.length < limit);
  return { entries, more: cursor !== undefined };
}

/** A yes/no question on the terminal. */
export async function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** The subcommands, each resolving to its exit code (throwing a UsageError on misuse). */
export function createDlqActions(ctx: DlqContext) {
  return {
    list(args: DlqArgs, io: CliIo): Promise<number> {
      const filter = filterOf(args);
      const limit = positiveInt(args.values.limit, 'limit') ?? DEFAULT_LIMIT;
      return ctx.withStore(io, async (store) => {
        const { entries, more } = await collect(store, filter, limit);
        if (args.values.json === true) {
          io.out(JSON.stringify(entries, null, 2));
          return EXIT.ok;
        }
        const scope: DeadLetterFilter = {};
        if (filter.job !== undefined) scope.job = filter.job;
        if (filter.runId !== undefined) scope.runId = filter.runId;
        io.out(`${formatCounts(await store.counts(scope))}${describe(scope)}`);
        if (entries.length === 0) {
          // Without a category the counts line has said it all already.
          if (filter.category !== undefined) io.out(`no dead letters match${describe(filter)}`);
          return EXIT.ok;
        }
        io.out(`\n${formatDeadLetterTable(entries)}`);
        if (more) io.out(`\nshowing the newest ${entries.length}; more match (raise --limit)`);
        return EXIT.ok;
      });
    },

    show(args: DlqArgs, io: CliIo): Promise<number> {
      const id = args.positionals[0]!;
      return ctx.withStore(io, async (store) => {
        const entry = await store.get(id);
        if (entry === undefined) {
          io.err(`dlq show: no dead letter ${id}`);
          return EXIT.failure;
        }
        io.out(args.values.json === true ? JSON.stringify(entry, null, 2) : formatDeadLetter(entry));
        return EXIT.ok;
      });
    },

    export(args: DlqArgs, io: CliIo): Promise<number> {
      const filter = filterOf(args);
      return ctx.withStore(io, (store) => exportDeadLetters(store, filter, args.values.out, io));
    },

    purge(args: DlqArgs, io: CliIo): Promise<number> {
      const filter = filterOf(args);
      const ids = args.positionals;
      if (ids.length > 0) {
        // Chosen entries by id: nothing else may narrow or widen what is removed.
        if (Object.keys(filter).length > 0)
          throw new UsageError('give either IDs or --category/--job/--run, not both');
        return ctx.withStore(io, async (store) => {
          const removed = await store.remove([...ids]);
          const missing = ids.length - removed;
          io.out(
            `purged ${plural(removed)}${missing > 0 ? ` (${missing} of the ids given were not in the store)` : ''}`,
          );
          return EXIT.ok;
        });
      }
      const yes = args.values.yes === true;
      if (!yes && !io.isTty)
        throw new UsageError('refusing to purge without --yes when not on a terminal; add --yes to confirm');
      return ctx.withStore(io, async (store) => {
        if (!yes) {
          const { category, ...scope } = filter;
          const counts = await store.counts(scope);
          const n =
            category === undefined
              ? Object.values(counts).reduce((a, b) => a + b, 0)
              : (counts[category] ?? 0);
          if (n === 0) {
            io.out(`no dead letters to purge${describe(filter)}`);
            return EXIT.ok;
          }
          if (!(await ctx.confirm(`purge ${plural(n)}${describe(filter)}? [y/N] `, io))) {
            io.err('dlq purge: cancelled, nothing purged');
            return EXIT.failure;
          }
        }
        io.out(`purged ${plural(await store.purge(filter))}${describe(filter)}`);
        return EXIT.ok;
      });
    },

    async replay(args: DlqArgs, io: CliIo): Promise<number> {
      const filter = filterOf(args);
      const ids = args.positionals;
      const file = args.values.file;
      if (file === undefined && args.values.encoding !== undefined)
        throw new UsageError('--encoding is the encoding of a --file');
      if (file !== undefined) {
        if (ids.length > 0 || filter.category !== undefined)
          throw new UsageError('give --file alone (with --job at most)');
        const encoding = fixedFileEncoding(args.values.encoding);
        const fixed = await ctx.withStore(io, (store) => applyFixedFile(store, file, io, encoding));
        if (fixed === undefined) return EXIT.failure;
        if (fixed.length === 0) {
          io.out('no dead letters to replay');
          return EXIT.ok;
        }
        return ctx.replay({ ids: fixed, ...(filter.job === undefined ? {} : { filter }) }, io);
      }
      if (ids.length > 0 && filter.category !== undefined)
        throw new UsageError('give either IDs or --category, not both');
      const selection: DeadLetterSelection = ids.length > 0 ? { ids: [...ids] } : {};
      if (ids.length === 0 || filter.job !== undefined) selection.filter = filter;
      return ctx.replay(selection, io);
    },
  };
}
