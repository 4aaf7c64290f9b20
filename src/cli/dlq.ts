/**
 * `rowbridge dlq`: list, show, export, replay and purge dead letters. Subcommand names,
 * flags and exit codes (0 ok, 1 failure, 64 usage) are a public contract. Replay itself
 * is delegated, so this file never loads BullMQ unless `dlq replay` runs.
 */
import type { Redis } from 'ioredis';
import { loadSettings } from '../../config/settings.ts';
import { ERROR_CATEGORIES } from '../ground/errors.ts';
import { createRedisConnection } from '../queue/redis-connection.ts';
import { statePrefixOf } from './create-runtime.ts';
import { createDeadLetterStore } from '../sync/state/dead-letter-store.ts';
import type { DeadLetterSelection, DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import { UsageError } from './args.ts';
import { defineCommand, helpText, parseCommand, usageFailure } from './command.ts';
import type { CommandSpec } from './command.ts';
import { askOnTerminal, createDlqActions } from './dlq-actions.ts';
import type { CliCommand, CliIo } from './io.ts';
import { EXIT } from './io.ts';
import { ensureRedisReachable } from './redis-reachable.ts';

/** What `dlq` needs from outside; injected so tests use their own store and replay. */
export interface DlqDeps {
  openStore(io: CliIo): Promise<{ store: DeadLetterStore; close(): Promise<void> }>;
  /** Re-maps the selected dead letters with the current job spec and sends them again; resolves to the exit code. */
  replay(selection: DeadLetterSelection, io: CliIo): Promise<number>;
  /** Asks a yes/no question; only called on a terminal. @defaultValue a readline prompt on stdin */
  confirm?(question: string, io: CliIo): Promise<boolean>;
}

const category = { type: 'string', value: 'C', help: 'only this error category' } as const;
const job = { type: 'string', value: 'NAME', help: 'only the dead letters of this job' } as const;
const run = { type: 'string', value: 'ID', help: 'only the dead letters of this run' } as const;

const SUBCOMMANDS = {
  list: defineCommand({
    name: 'dlq list',
    usage: ['dlq list [--category C] [--job NAME] [--run ID] [--limit N] [--json]'],
    description: 'The counts per category, then the newest dead letters, one line each.',
    options: {
      category,
      job,
      run,
      limit: { type: 'string', value: 'N', help: 'show at most N (default 50)' },
      json: { type: 'boolean', help: 'print the entries as JSON' },
    },
  }),
  show: defineCommand({
    name: 'dlq show',
    usage: ['dlq show ID [--json]'],
    description: 'One dead letter: its reason, position in the source, source row and mapped payload.',
    options: { json: { type: 'boolean', help: 'print the entry as JSON' } },
    positionals: { min: 1, max: 1, label: 'dead letter (an ID from dlq list)' },
  }),
  export: defineCommand({
    name: 'dlq export',
    usage: ['dlq export [--csv] [--category C] [--job NAME] [--run ID] [--out FILE]'],
    description: 'The dead letters as CSV to fix in a spreadsheet; replay the fixed file with replay --file.',
    options: {
      csv: { type: 'boolean', help: 'CSV (the only format; accepted for clarity)' },
      category,
      job,
      run,
      out: { type: 'string', value: 'FILE', help: 'write to FILE instead of stdout' },
    },
  }),
  replay: defineCommand({
    name: 'dlq replay',
    usage: ['dlq replay [--category C | ID... | --file FIXED.csv [--encoding ENC]] [--job NAME]'],
    description:
      "Re-maps the dead letters with each job's current spec and writes them again, in this process.\n" +
      'Exit 0 all landed, 2 some failed again, 1 failure.',
    options: {
      category,
      job,
      file: { type: 'string', value: 'FIXED.csv', help: 'the rows of a dlq export, fixed' },
      encoding: {
        type: 'string',
        value: 'ENC',
        help: "FIXED.csv's encoding, as source.encoding: utf8 (default), gbk, gb18030, utf16le, latin1",
      },
    },
    positionals: { max: Infinity, label: 'ID' },
  }),
  purge: defineCommand({
    name: 'dlq purge',
    usage: ['dlq purge [--category C] [--job NAME] [--run ID | ID...] [--yes]'],
    description: 'Removes dead letters for good; asks first on a terminal, needs --yes elsewhere.',
    options: { category, job, run, yes: { type: 'boolean', help: 'do not ask' } },
    positionals: { max: Infinity, label: 'ID' },
  }),
} satisfies Record<string, CommandSpec>;

const USAGE = `usage: rowbridge dlq <subcommand>

${Object.values(SUBCOMMANDS)
  .map((spec) => `  ${spec.usage?.[0] ?? spec.name}`)
  .join('\n')}

categories: ${ERROR_CATEGORIES.join(', ')}
positions: "line N" is the line in the source file (header counted), "COLUMN VALUE" a database
row's key (order_id 42) or a worksheet row's id (rowid ...), "record N" the N-th record read.
rowbridge dlq <subcommand> --help lists its options.`;

function isSubcommand(name: string | undefined): name is keyof typeof SUBCOMMANDS {
  return name !== undefined && Object.hasOwn(SUBCOMMANDS, name);
}

export function createDlqCommand(deps: DlqDeps): CliCommand {
  const actions = createDlqActions({
    async withStore(io, use) {
      const opened = await deps.openStore(io);
      try {
        return await use(opened.store);
      } finally {
        await opened.close();
      }
    },
    replay: (selection, io) => deps.replay(selection, io),
    confirm: (question, io) =>
      deps.confirm === undefined ? askOnTerminal(question) : deps.confirm(question, io),
  });

  return {
    async main(args, io) {
      const [sub, ...rest] = args;
      if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
        if (sub === undefined) io.err(`dlq: which subcommand?\n\n${USAGE}`);
        else io.out(USAGE);
        return sub === undefined ? EXIT.usage : EXIT.ok;
      }
      if (!isSubcommand(sub)) {
        io.err(`dlq: unknown subcommand "${sub}"\n\n${USAGE}`);
        return EXIT.usage;
      }
      const spec: CommandSpec = SUBCOMMANDS[sub];
      if (rest.includes('--help') || rest.includes('-h')) {
        io.out(`${helpText(spec)}\n${USAGE}`);
        return EXIT.ok;
      }
      const parsed = parseCommand(spec, rest, io);
      if (typeof parsed === 'number') return parsed;
      try {
        return await actions[sub](parsed, io);
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(spec, err, io);
        io.err(`dlq ${sub}: ${err instanceof Error ? err.message : String(err)}`);
        return EXIT.failure;
      }
    },
  };
}

/** A dead-letter store on the Redis of the settings, failing fast and clearly when it is down. */
async function openRedisStore(io: CliIo): Promise<{ store: DeadLetterStore; close(): Promise<void> }> {
  const settings = loadSettings(io.env);
  await ensureRedisReachable(settings.redisUrl);
  const redis = createRedisConnection(settings.redisUrl, { bullmq: false });
  return {
    store: createDeadLetterStore({
      redis: redis as Redis,
      prefix: statePrefixOf(settings.queuePrefix),
      retentionMs: settings.dlqRetentionDays * 86_400_000,
    }),
    close: async () => {
      await redis.quit();
    },
  };
}

/** `rowbridge dlq ...` as src/cli.ts runs it: the Redis of the settings and the queue's replay. */
export function main(args: string[], io: CliIo): Promise<number> {
  return createDlqCommand({
    openStore: openRedisStore,
    // Loaded only when replay runs: it brings BullMQ and the whole sync engine.
    replay: async (selection, replayIo) => {
      const { replayDeadLetters } = await import('./dlq-replay.ts');
      return replayDeadLetters(selection, replayIo);
    },
  }).main(args, io);
}
