/**
 * The change stream of one slot (pgoutput, through pg-logical-replication), cut into
 * batches of whole transactions. A batch is acknowledged only once written: the position
 * and the next ordinal are saved first, then the server is told, so it can free its WAL.
 * While a batch is being written the socket is paused (flow control): a backlog waits in
 * the server's WAL, never in this process. An idle stream acknowledges the server's
 * keepalive position, so WAL written for other tables is not kept for this slot.
 */
import { LogicalReplicationService, PgoutputPlugin } from 'pg-logical-replication';
import type { Pgoutput } from 'pg-logical-replication';
import type { PostgresCdcSourceSpec } from '../sources/source-spec.ts';
import { pgWallClockTypes } from '../sources/sql-wall-clock-types.ts';
import { createOriginFilter } from './origin-filter.ts';
import type { Change } from './write-changes.ts';

export interface StreamOptions {
  url: string;
  spec: PostgresCdcSourceSpec;
  /** Where to start: the position saved with `nextIndex`. */
  startLsn: string;
  nextIndex: number;
  /** Changes in a batch before it is cut (at the next commit). */
  maxBatch: number;
  /** A batch is cut this long after its first change at the latest. */
  flushMs: number;
  /** How often an idle stream acknowledges the server's position. */
  heartbeatMs: number;
  /** Writes a batch (retrying what can be retried); a throw stops the stream. */
  write(changes: Change[]): Promise<void>;
  /** Saves the position: every change before `lsn` is written; the next one is `nextIndex`. */
  savePosition(lsn: string, nextIndex: number): Promise<void>;
  /** The age of the oldest change received and not yet written (0: none). */
  onLag?(seconds: number, confirmedLsn: string): void;
  /**
   * Drain mode: true once the confirmed position covers everything the stream is to
   * deliver. Asked after each acknowledgement and each heartbeat, between messages, so the
   * stream ends with every change it handed to `write` written and acknowledged.
   */
  caughtUp?(confirmedLsn: string): boolean;
  signal: AbortSignal;
}

/** `16/B374D848` as a number of bytes. */
export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi ?? '0'}`) << 32n) | BigInt(`0x${lo ?? '0'}`);
}

/** The inverse of {@link lsnValue}. */
export function lsnText(value: bigint): string {
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Streams until `signal` aborts (resolves) or the stream or a write fails (rejects). */
export async function streamChanges(options: StreamOptions): Promise<void> {
  const { spec } = options;
  const [schema, table] = spec.table.includes('.') ? spec.table.split('.', 2) : ['public', spec.table];
  const service = new LogicalReplicationService(
    { connectionString: options.url },
    { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } },
  );
  const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [spec.publication] });
  let received = 0;
  let processed = 0;
  const parse = plugin.parse.bind(plugin);
  // Parsed as each message arrives: columns get the parsers the snapshot read with, so a
  // row streamed and the same row read are the same values (wall clocks stay text).
  plugin.parse = (buffer: Buffer) => {
    received += 1;
    const message = parse(buffer);
    if (message.tag === 'relation')
      for (const column of message.columns)
        column.parser = pgWallClockTypes.getTypeParser(column.typeOid, 'text') as (raw: unknown) => unknown;
    return message;
  };

  const ownWrites = createOriginFilter(spec.origin);
  let confirmed = options.startLsn;
  let nextIndex = options.nextIndex;
  let txn: Change[] | undefined;
  let txnTime = 0;
  let pending: Change[] = [];
  /** The commit the pending changes end with, and the ordinal after it. */
  let pendingEnd: { lsn: string; nextIndex: number } | undefined;
  let safeIdleLsn: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failure: unknown;
  let chain: Promise<void> = Promise.resolve();
  /** Once the stream ends, no further step starts (a drain ends between two messages). */
  let ended = false;
  let stop!: (err?: unknown) => void;
  const stopped = new Promise<void>((resolve, reject) => {
    stop = (err) => {
      ended = true;
      if (err === undefined) resolve();
      else reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
    };
  });

  /** Runs `step` after every step before it: messages, flushes and heartbeats never overlap. */
  const serial = (step: () => Promise<void>): Promise<void> => {
    chain = chain.then(async () => {
      if (ended || failure !== undefined || options.signal.aborted) return;
      try {
        await step();
      } catch (err) {
        failure = err;
        stop(err);
      }
    });
    return chain;
  };

  const ours = (relation: Pgoutput.MessageRelation) => relation.schema === schema && relation.name === table;
  const idOf = (row: Record<string, unknown> | null | undefined) => {
    const value = row?.[spec.keyColumn];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'object' ? JSON.stringify(value) : (value as number | string).toString();
  };
  const add = (op: Change['op'], id: string | undefined, data: Record<string, unknown>) => {
    if (id === undefined) return;
    txn ??= [];
    txn.push({ op, index: nextIndex++, id, data, commitTime: txnTime });
  };

  /**
   * Tells the server everything before `lsn` is done. pg-logical-replication sends the LSN
   * it is given plus one; PostgreSQL takes the reply as the slot's confirmed position and
   * on the next START_REPLICATION skips every transaction whose commit record starts
   * before it. A commit's end (or a keepalive's position) is where the next record starts,
   * so one byte more skipped a transaction whose commit record came right after the one
   * acknowledged (its rows written before it): lost from the next stream on.
   */
  const tellServer = (lsn: string, ping = false) =>
    service.acknowledge(lsnText(lsnValue(lsn) > 0n ? lsnValue(lsn) - 1n : 0n), ping);

  async function acknowledge(lsn: string, next: number): Promise<void> {
    await options.savePosition(lsn, next);
    confirmed = lsn;
    await tellServer(lsn);
    endIfCaughtUp();
  }

  const endIfCaughtUp = () => {
    if (options.caughtUp?.(confirmed) === true) stop();
  };

  async function flush(partial: boolean): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const batch = partial ? [...pending, ...(txn ?? [])] : pending;
    if (batch.length > 0) {
      const oldest = batch[0]!.commitTime ?? Date.now();
      options.onLag?.((Date.now() - oldest) / 1000, confirmed);
      await options.write(batch);
    }
    pending = [];
    if (partial) txn = [];
    // A transaction written in parts is acknowledged at its commit, never inside it.
    if (!partial && pendingEnd !== undefined) {
      await acknowledge(pendingEnd.lsn, pendingEnd.nextIndex);
      pendingEnd = undefined;
    }
    options.onLag?.(0, confirmed);
  }

  async function onMessage(message: Pgoutput.Message): Promise<void> {
    // rowbridge's own writes (a two-way job's, marked with the origin): never captured.
    if (ownWrites.drops(message)) return;
    switch (message.tag) {
      case 'begin':
        txn = [];
        txnTime = Number(message.commitTime.valueOf() / 1000n);
        break;
      case 'insert':
        if (ours(message.relation)) add('upsert', idOf(message.new), message.new);
        break;
      case 'update':
        if (!ours(message.relation)) break;
        {
          const before = idOf(message.key ?? message.old);
          const after = idOf(message.new);
          // The primary key itself changed: the old row is gone.
          if (before !== undefined && before !== after)
            add('delete', before, message.old ?? message.key ?? {});
          add('upsert', after, message.new);
        }
        break;
      case 'delete':
        if (ours(message.relation))
          add('delete', idOf(message.key ?? message.old), message.old ?? message.key ?? {});
        break;
      case 'truncate':
        // Every row of the table at once, with no row named: one change (apply-truncate.ts).
        if (message.relations.some(ours)) {
          txn ??= [];
          txn.push({ op: 'truncate', index: nextIndex++, id: '', data: {}, commitTime: txnTime });
        }
        break;
      case 'commit':
        pending.push(...(txn ?? []));
        txn = undefined;
        pendingEnd = { lsn: message.commitEndLsn ?? message.commitLsn ?? confirmed, nextIndex };
        if (pending.length >= options.maxBatch) await flush(false);
        else if (timer === undefined)
          timer = setTimeout(
            () => void serial(() => flush(false)),
            pending.length === 0 ? 0 : options.flushMs,
          );
        break;
      default:
        break;
    }
    // One transaction larger than a batch is written in parts as it arrives.
    if (txn !== undefined && txn.length >= options.maxBatch) await flush(true);
  }

  const idle = () =>
    received === processed && txn === undefined && pending.length === 0 && pendingEnd === undefined;

  service.on('data', (_lsn: string, message: Pgoutput.Message) =>
    serial(async () => {
      await onMessage(message);
    }).finally(() => {
      processed += 1;
    }),
  );
  service.on('heartbeat', (lsn: string, _time: number, shouldRespond: boolean) => {
    // Everything received before this keepalive is handled: its position is safe to confirm.
    if (idle()) safeIdleLsn = lsn;
    if (shouldRespond) void tellServer(confirmed).catch(() => undefined);
  });
  service.on('error', (err: Error) => {
    failure ??= err;
    stop(err);
  });
  const beat = setInterval(() => {
    void serial(async () => {
      if (idle() && safeIdleLsn !== undefined && lsnValue(safeIdleLsn) > lsnValue(confirmed))
        await acknowledge(safeIdleLsn, nextIndex);
      // A drain may start where it is to end: nothing to acknowledge, nothing to wait for.
      if (idle()) endIfCaughtUp();
      // Asks for a keepalive: the next beat has a fresh position to confirm.
      await tellServer(confirmed, true);
    });
  }, options.heartbeatMs);
  const onAbort = () => stop();
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    service.subscribe(plugin, spec.slot, options.startLsn).then(
      () =>
        stop(
          options.signal.aborted || failure !== undefined
            ? failure
            : new Error(`the stream of slot ${spec.slot} ended`),
        ),
      (err: unknown) => stop(err),
    );
    await stopped;
  } finally {
    clearInterval(beat);
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    await service.destroy().catch(() => undefined);
  }
}
