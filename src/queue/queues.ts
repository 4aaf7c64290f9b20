import { Queue } from 'bullmq';
import { createRepeatGate } from '../ground/repeat-gate.ts';
import type { ColumnarRows } from '../sync/batch/columnar-rows.ts';
import type { TraceCarrier } from '../ground/tracing.ts';
import type { Redis } from 'ioredis';
import type { Logger } from '../ground/logger.ts';

export const RUN_QUEUE = 'runs';
export const BATCH_QUEUE = 'batches';
/** Notifications waiting for delivery (notify-queue.ts, notify-worker.ts). */
export const NOTIFY_QUEUE = 'notify';

/** Data of a run job: names and options only, never credentials or connection strings. */
export interface RunJobData {
  /** Absent on jobs a scheduler made: the processor gives them a run id. */
  runId?: string;
  job: string;
  /** `hook`: a hint run, which writes the rows webhook calls named (hint-run.ts). */
  trigger: 'cli' | 'enqueue' | 'schedule' | 'replay' | 'hook';
  step?: 'read' | 'finalize';
  /** Mirror: delete past the safety threshold. */
  force?: boolean;
  /** Compare with what the worksheet holds, ignoring the saved content hashes (`run --full`). */
  full?: boolean;
  /** Dead letters to replay instead of reading the source. */
  replayIds?: string[];
  /** A backfill: the cursor range to read, split into chunk jobs. */
  range?: { from: string; to: string; chunks: number };
  /** Set on a chunk job of a backfill: the piece of the range it reads. */
  chunk?: { no: number; since: string; sinceInclusive: boolean; until: string };
  /** A singer source: the local file `rowbridge singer` staged this run's records in. */
  singerChunk?: string;
  /** W3C trace context of the run's trace, when tracing is on (ground/tracing.ts). */
  trace?: TraceCarrier;
}

/** Data of a batch job: the mapped rows with their source records (for dead letters). */
export interface BatchJobData {
  runId: string;
  job: string;
  batchNo: number;
  /** The format of the rows: `BATCH_ROWS_FORMAT` of sync/batch/batch-job-rows.ts. */
  format: number;
  /** The rows by column (sync/batch/columnar-rows.ts). */
  columnar: ColumnarRows;
  /** Times the batch was put back because the application was unavailable. */
  pauses?: number;
  /** W3C trace context of the run job that added it, when tracing is on. */
  trace?: TraceCarrier;
}

/** Where the queues live, and where their connection errors are told. */
export interface QueueConnection {
  /** BullMQ connection (blocking commands: maxRetriesPerRequest null). */
  connection: Redis;
  /** BullMQ key prefix. */
  queuePrefix: string;
  logger: Logger;
}

export function createQueues(rt: QueueConnection): {
  runs: Queue<RunJobData>;
  batches: Queue<BatchJobData>;
  close(): Promise<void>;
} {
  const opts = { connection: rt.connection, prefix: rt.queuePrefix };
  const runs = new Queue<RunJobData>(RUN_QUEUE, opts);
  const batches = new Queue<BatchJobData>(BATCH_QUEUE, opts);
  // Without a listener BullMQ prints each connection error with its stack to stderr.
  const errors = createRepeatGate(10_000);
  for (const queue of [runs, batches] as Queue[]) {
    queue.on('error', (err: Error) => {
      if (errors(err.message)) rt.logger.warn({ err: { message: err.message } }, `queue ${queue.name}`);
    });
  }
  return {
    runs,
    batches,
    async close() {
      await batches.close();
      await runs.close();
    },
  };
}
