/**
 * A span for each run and batch job a worker works, a child of the trace context in the
 * job's data (docs/tracing.md): one trace holds every worker that touched a run. A run job
 * that comes without one (enqueued with tracing off, or by a scheduler) starts the trace
 * and writes its context into its own data, so its batches and its finalize step join it.
 */
import type { Job } from 'bullmq';
import { activeCarrier, inSpan, RUN_ATTRIBUTES } from '../ground/tracing.ts';
import type { TraceCarrier } from '../ground/tracing.ts';

type Processor<D, R> = (job: Job<D>, token?: string, signal?: AbortSignal) => Promise<R>;

interface TracedData {
  job: string;
  runId?: string;
  trace?: TraceCarrier;
  step?: string;
  batchNo?: number;
}

/** Wraps a run (`kind: 'run'`) or batch processor in a span per job it works. */
export function withJobSpan<D extends TracedData, R>(
  kind: 'run' | 'batch',
  /** Which worker works the job (host, pid and the worker set), shown on its span. */
  worker: string,
  processor: Processor<D, R>,
): Processor<D, R> {
  return (job, token, signal) =>
    inSpan(
      kind === 'run' ? `rowbridge.run ${job.data.step ?? 'read'}` : 'rowbridge.batch',
      {
        [RUN_ATTRIBUTES.job]: job.data.job,
        ...(job.data.runId === undefined ? {} : { [RUN_ATTRIBUTES.runId]: job.data.runId }),
        ...(job.data.batchNo === undefined ? {} : { 'rowbridge.batch_no': job.data.batchNo }),
        'messaging.message.id': job.id ?? '',
        'rowbridge.worker': worker,
      },
      async (span) => {
        const carrier = activeCarrier();
        if (kind === 'run' && job.data.trace === undefined && carrier !== undefined)
          await job.updateData({ ...job.data, trace: carrier });
        try {
          return await processor(job, token, signal);
        } finally {
          // A scheduled run job is given its run id while it works.
          if (job.data.runId !== undefined) span.setAttribute(RUN_ATTRIBUTES.runId, job.data.runId);
        }
      },
      job.data.trace,
    );
}
