/**
 * `rowbridge dlq`: list, show, replay and purge dead letters. Subcommand names, flags
 * and exit codes (0 ok, 1 failure, 64 usage) are a public contract. Replay itself is
 * delegated, so this file never loads BullMQ unless `dlq replay` runs.
 */
import { createInterface } from 'node:readline/promises';
import type { Redis } from 'ioredis';
import { createRedisConnection } from '../queue/redis-connection.ts';
import { statePrefixOf } from '../queue/runtime.ts';
import { loadSettings } from '../../config/settings.ts';
import { ERROR_CATEGORIES } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';
import { formatCounts, formatDeadLetter, formatDeadLetterTable } from '../sync/state/dead-letter-format.ts';
import { createDeadLetterStore } from '../sync/state/dead-letter-store.ts';
import type { DeadLetterEntry } from '../sync/state/dead-letter-entry.ts';
import type {
  DeadLetterFilter,
  DeadLetterSelection,
  DeadLetterStore,
} from '../sync/state/dead-letter-store.ts';
import { applyFixedFile, exportDeadLetters } from './dlq-file.ts';
import type { CliCommand, CliIo } from './io.ts';
import { EXIT } from './io.ts';

/** What `dlq` needs from outside; injected so tests use their own store and replay. */
export interface DlqDeps {
  openStore(io: CliIo): Promise<{ store: DeadLetterStore; close(): Promise<void> }>;
  /** Re-maps the selected dead letters with the current job spec and sends them again; resolves to the exit code. */
  replay(selection: DeadLetterSelection, io: CliIo): Promise<number>;
  /** Asks a yes/no question; only called on a terminal. @defaultValue a readline prompt on stdin */
  confirm?(question: string, io: CliIo): Promise<boolean>;
}

const USAGE = `usage: rowbridge dlq <subcommand>

  dlq list [--category C] [--job NAME] [--run ID] [--limit N] [--json]
  dlq show ID [--json]
  dlq export [--csv] [--category C] [--job NAME] [--run ID] [--out FILE]
  dlq replay [--category C | ID... | --file FIXED.csv] [--job NAME]
  dlq purge [--category C] [--job NAME] [--run ID | ID...] [--yes]

categories: ${ERROR_CATEGORIES.join(', ')}
positions: "line N" is the line in the source file, "#N" the N-th record the run read.`;

/** Flags taking a value, and boolean flags, allowed per subcommand. */
const FLAGS: Record<string, { values: string[]; booleans: string[] }> = {
  list: { values: ['category', 'job', 'run', 'limit'], booleans: ['json'] },
  show: { values: [], booleans: ['json'] },
  export: { values: ['category', 'job', 'run', 'out'], booleans: ['csv'] },
  replay: { values: ['category', 'job', 'file'], booleans: [] },
  purge: { values: ['category', 'job', 'run'], booleans: ['yes'] },
};

const DEFAULT_LIMIT = 50;

class UsageError extends Error {}

interface Parsed {
  values: Map<string, string>;
  booleans: Set<string>;
  positionals: string[];
}

function parseArgs(args: readonly string[], allowed: { values: string[]; booleans: string[] }): Parsed {
  const parsed: Parsed = { values: new Map(), booleans: new Set(), positionals: [] };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      parsed.positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      parsed.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (allowed.booleans.includes(name) && eq === -1) {
      parsed.booleans.add(name);
    } else if (allowed.values.includes(name)) {
      const value = eq === -1 ? args[(i += 1)] : arg.slice(eq + 1);
      if (value === undefined || value === '' || (eq === -1 && value.startsWith('--'))) {
        throw new UsageError(`--${name} needs a value`);
      }
      if (parsed.values.has(name)) throw new UsageError(`--${name} given twice`);
      parsed.values.set(name, value);
    } else {
      const known = [...allowed.values, ...allowed.booleans].map((f) => `--${f}`).join(', ') || 'none';
      throw new UsageError(`unknown option ${arg.slice(0, eq === -1 ? undefined : eq)} (options: ${known})`);
    }
  }
  return parsed;
}

function filterOf(parsed: Parsed): DeadLetterFilter {
  const filter: DeadLetterFilter = {};
  const category = parsed.values.get('category');
  if (category !== undefined) {
    if (!(ERROR_CATEGORIES as readonly string[]).includes(category)) {
      throw new UsageError(`unknown category "${category}"; categories: ${ERROR_CATEGORIES.join(', ')}`);
    }
    filter.category = category as ErrorCategory;
  }
  const job = parsed.values.get('job');
  if (job !== undefined) filter.job = job;
  const runId = parsed.values.get('run');
  if (runId !== undefined) filter.runId = runId;
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

function plural(n: number): string {
  return `${n} dead letter${n === 1 ? '' : 's'}`;
}

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

async function defaultConfirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export function createDlqCommand(deps: DlqDeps): CliCommand {
  const confirm = (question: string, io: CliIo): Promise<boolean> =>
    deps.confirm === undefined ? defaultConfirm(question) : deps.confirm(question, io);

  async function withStore<T>(io: CliIo, use: (store: DeadLetterStore) => Promise<T>): Promise<T> {
    const opened = await deps.openStore(io);
    try {
      return await use(opened.store);
    } finally {
      await opened.close();
    }
  }

  async function list(parsed: Parsed, io: CliIo): Promise<number> {
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const filter = filterOf(parsed);
    const rawLimit = parsed.values.get('limit') ?? String(DEFAULT_LIMIT);
    const limit = Number(rawLimit);
    if (!/^\d+$/.test(rawLimit) || !Number.isSafeInteger(limit) || limit < 1) {
      throw new UsageError(`--limit must be a whole number >= 1, got "${rawLimit}"`);
    }
    return withStore(io, async (store) => {
      const { entries, more } = await collect(store, filter, limit);
      if (parsed.booleans.has('json')) {
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
  }

  async function show(parsed: Parsed, io: CliIo): Promise<number> {
    const [id, extra] = parsed.positionals;
    if (id === undefined) throw new UsageError('which dead letter? give its ID (see dlq list)');
    if (extra !== undefined) throw new UsageError(`one ID at a time, got also "${extra}"`);
    return withStore(io, async (store) => {
      const entry = await store.get(id);
      if (entry === undefined) {
        io.err(`dlq show: no dead letter ${id}`);
        return EXIT.failure;
      }
      io.out(parsed.booleans.has('json') ? JSON.stringify(entry, null, 2) : formatDeadLetter(entry));
      return EXIT.ok;
    });
  }

  async function exportCsv(parsed: Parsed, io: CliIo): Promise<number> {
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    return withStore(io, (store) => exportDeadLetters(store, filterOf(parsed), parsed.values.get('out'), io));
  }

  async function purge(parsed: Parsed, io: CliIo): Promise<number> {
    const filter = filterOf(parsed);
    if (parsed.positionals.length > 0) {
      // Chosen entries by id: nothing else may narrow or widen what is removed.
      if (Object.keys(filter).length > 0)
        throw new UsageError('give either IDs or --category/--job/--run, not both');
      const ids = parsed.positionals;
      return withStore(io, async (store) => {
        const removed = await store.remove([...ids]);
        io.out(
          `purged ${plural(removed)}${removed < ids.length ? ` (${ids.length - removed} of the ids given were not in the store)` : ''}`,
        );
        return EXIT.ok;
      });
    }
    if (!parsed.booleans.has('yes') && !io.isTty) {
      throw new UsageError('refusing to purge without --yes when not on a terminal; add --yes to confirm');
    }
    return withStore(io, async (store) => {
      if (!parsed.booleans.has('yes')) {
        const { category, ...scope } = filter;
        const counts = await store.counts(scope);
        const n =
          category === undefined ? Object.values(counts).reduce((a, b) => a + b, 0) : (counts[category] ?? 0);
        if (n === 0) {
          io.out(`no dead letters to purge${describe(filter)}`);
          return EXIT.ok;
        }
        if (!(await confirm(`purge ${plural(n)}${describe(filter)}? [y/N] `, io))) {
          io.err('dlq purge: cancelled, nothing purged');
          return EXIT.failure;
        }
      }
      io.out(`purged ${plural(await store.purge(filter))}${describe(filter)}`);
      return EXIT.ok;
    });
  }

  async function replay(parsed: Parsed, io: CliIo): Promise<number> {
    const filter = filterOf(parsed);
    const file = parsed.values.get('file');
    if (file !== undefined) {
      if (parsed.positionals.length > 0 || filter.category !== undefined)
        throw new UsageError('give --file alone (with --job at most)');
      const fixed = await withStore(io, (store) => applyFixedFile(store, file, io));
      if (fixed === undefined) return EXIT.failure;
      if (fixed.length === 0) {
        io.out('no dead letters to replay');
        return EXIT.ok;
      }
      return deps.replay({ ids: fixed, ...(filter.job === undefined ? {} : { filter }) }, io);
    }
    const ids = parsed.positionals;
    if (ids.length > 0 && filter.category !== undefined) {
      throw new UsageError('give either IDs or --category, not both');
    }
    const selection: DeadLetterSelection = ids.length > 0 ? { ids: [...ids] } : {};
    if (ids.length === 0 || filter.job !== undefined) selection.filter = filter;
    return deps.replay(selection, io);
  }

  const run: Record<string, (parsed: Parsed, io: CliIo) => Promise<number>> = {
    list,
    show,
    export: exportCsv,
    replay,
    purge,
  };

  return {
    async main(args, io) {
      const [sub, ...rest] = args;
      if (
        sub === '--help' ||
        sub === '-h' ||
        sub === 'help' ||
        rest.includes('--help') ||
        rest.includes('-h')
      ) {
        io.out(USAGE);
        return EXIT.ok;
      }
      const handler = sub === undefined ? undefined : run[sub];
      const allowed = sub === undefined ? undefined : FLAGS[sub];
      if (sub === undefined || handler === undefined || allowed === undefined) {
        io.err(
          `${sub === undefined ? 'dlq: which subcommand?' : `dlq: unknown subcommand "${sub}"`}\n\n${USAGE}`,
        );
        return EXIT.usage;
      }
      try {
        return await handler(parseArgs(rest, allowed), io);
      } catch (err) {
        if (err instanceof UsageError) {
          io.err(`dlq ${sub}: ${err.message}\n\n${USAGE}`);
          return EXIT.usage;
        }
        io.err(`dlq ${sub}: ${err instanceof Error ? err.message : String(err)}`);
        return EXIT.failure;
      }
    },
  };
}

/** host:port of a Redis URL, without the credentials it may carry. */
function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') {
      return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
    }
  } catch {
    // not a URL: fall through
  }
  return 'the address in REDIS_URL';
}

function reasonOf(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { code, message } = err as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : String(message);
}

/** A dead-letter store on the Redis of the settings, failing fast and clearly when it is down. */
async function openRedisStore(io: CliIo): Promise<{ store: DeadLetterStore; close(): Promise<void> }> {
  const settings = loadSettings(io.env);
  const redis = createRedisConnection(settings.redisUrl, {
    bullmq: false,
    lazyConnect: true,
    connectTimeoutMs: 3000,
  });
  // ioredis reports the cause on 'error' and rejects connect() with "Connection is closed".
  let lastError: unknown;
  redis.on('error', (err) => {
    lastError = err;
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(
      `cannot reach Redis at ${redisAddress(settings.redisUrl)} (${reasonOf(lastError ?? err)})`,
      { cause: err },
    );
  }
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
