/**
 * Walks a dead-letter index in (score, id) order, a chunk at a time. Positions are
 * (score, id) pairs rather than offsets, so entries added or removed between chunks
 * (replay removes what it has replayed while it iterates) never make the walk skip or
 * repeat an entry: the order is the same total order in every index.
 */
import type { Redis } from 'ioredis';
import { DEAD_LETTER_SCRIPTS, runDeadLetterScript } from './dead-letter-scripts.ts';

/** A place in the (createdAt ms, id) order shared by all indexes. */
export interface ScanPosition {
  score: number;
  id: string;
}

/** One index member with its stored JSON ('' when the entry vanished). */
export interface ScanItem extends ScanPosition {
  raw: string;
}

export interface ScanOptions {
  /** The sorted set walked. */
  index: string;
  /** The entry hash. */
  entries: string;
  /** `desc`: newest first. */
  direction: 'asc' | 'desc';
  /** Start after this position (exclusive). */
  after?: ScanPosition | undefined;
  chunk: number;
}

function parseItems(reply: unknown): ScanItem[] {
  if (!Array.isArray(reply) || reply.length % 3 !== 0) {
    throw new Error('dead-letter store: unexpected reply from the page script');
  }
  const items: ScanItem[] = [];
  for (let i = 0; i < reply.length; i += 3) {
    items.push({ id: String(reply[i]), score: Number(reply[i + 1]), raw: String(reply[i + 2]) });
  }
  return items;
}

/**
 * Rank of the first member after `after` when `after` itself has gone: members ordered
 * before it are those with a better score plus its score-ties that sort before its id.
 * Redis orders ties by member bytes, so the comparison is on UTF-8 bytes too.
 */
async function rankAfter(
  redis: Redis,
  index: string,
  direction: 'asc' | 'desc',
  after: ScanPosition,
): Promise<number> {
  const s = String(after.score);
  const [countReply, tiesReply] =
    (await redis
      .multi()
      .zcount(index, direction === 'desc' ? `(${s}` : '-inf', direction === 'desc' ? '+inf' : `(${s}`)
      .zrangebyscore(index, s, s)
      .exec()) ?? [];
  if (
    countReply === undefined ||
    tiesReply === undefined ||
    countReply[0] !== null ||
    tiesReply[0] !== null
  ) {
    throw new Error('dead-letter store: could not locate the scan position', {
      cause: countReply?.[0] ?? tiesReply?.[0],
    });
  }
  const idBytes = Buffer.from(after.id, 'utf8');
  const ties = tiesReply[1] as string[];
  const tiesBefore = ties.filter((member) => {
    const cmp = Buffer.compare(Buffer.from(member, 'utf8'), idBytes);
    return direction === 'desc' ? cmp > 0 : cmp < 0;
  }).length;
  return Number(countReply[1]) + tiesBefore;
}

/** Yields chunks of index members in order; stop iterating whenever you have enough. */
export async function* scanIndex(redis: Redis, options: ScanOptions): AsyncGenerator<ScanItem[]> {
  const { index, entries, direction, chunk } = options;
  let after = options.after;
  for (;;) {
    let reply: unknown =
      after === undefined
        ? await runDeadLetterScript(
            redis,
            DEAD_LETTER_SCRIPTS.page,
            [index, entries],
            [direction, 'start', 0, '', chunk],
          )
        : await runDeadLetterScript(
            redis,
            DEAD_LETTER_SCRIPTS.page,
            [index, entries],
            [direction, 'after', after.id, after.score, chunk],
          );
    if (reply === null && after !== undefined) {
      const start = await rankAfter(redis, index, direction, after);
      reply = await runDeadLetterScript(
        redis,
        DEAD_LETTER_SCRIPTS.page,
        [index, entries],
        [direction, 'start', start, '', chunk],
      );
    }
    const items = parseItems(reply);
    if (items.length > 0) yield items;
    const last = items.at(-1);
    if (last === undefined || items.length < chunk) return;
    after = { score: last.score, id: last.id };
  }
}

/** Opaque list cursor: a position, base64url-encoded. */
export function encodeCursor(position: ScanPosition): string {
  return Buffer.from(JSON.stringify([position.score, position.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): ScanPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isFinite(value[0]) &&
      typeof value[1] === 'string'
    ) {
      return { score: Number(value[0]), id: value[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new Error(
    `dead-letter store: invalid list cursor "${cursor.slice(0, 40)}" (pass the "next" value of a previous list)`,
  );
}
