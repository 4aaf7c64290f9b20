/**
 * The tracing facade (docs/tracing.md): spans and W3C trace context through
 * `@opentelemetry/api` only. Until cli/tracing-setup.ts registers the SDK (only when
 * OTEL_* variables ask for traces) every call here is the API's no-op: no span is
 * recorded and no trace context is written into job data.
 */
import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';

/** W3C trace context as it travels in BullMQ job data and in a hook's headers. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** The attributes every span of a run carries, so a run's trace is found by its id. */
export const RUN_ATTRIBUTES = { job: 'rowbridge.job', runId: 'rowbridge.run_id' } as const;

const tracer = () => trace.getTracer('rowbridge');

/** Errors that are control flow (BullMQ's Delayed/WaitingChildren): the span did not fail. */
const CONTROL_FLOW = new Set(['DelayedError', 'WaitingChildrenError', 'WaitingError']);

/**
 * Runs `fn` in a new active span named `name`, a child of `parent` when given (a job's
 * data, a hook's headers), else of the active span. A thrown error marks the span failed
 * with the error's name and code, never its message (it may quote a row).
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  parent?: TraceCarrier,
): Promise<T> {
  const ctx = parent === undefined ? context.active() : propagation.extract(context.active(), parent);
  return tracer().startActiveSpan(name, { attributes }, ctx, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      const e = err as { name?: unknown; code?: unknown };
      const errName = typeof e.name === 'string' ? e.name : 'Error';
      if (!CONTROL_FLOW.has(errName)) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: errName });
        span.setAttribute('error.type', typeof e.code === 'string' ? e.code : errName);
      }
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The active span's trace context, to put in a job's data; undefined when tracing is off. */
export function activeCarrier(): TraceCarrier | undefined {
  const carrier: Partial<TraceCarrier> = {};
  propagation.inject(context.active(), carrier);
  return typeof carrier.traceparent === 'string' ? (carrier as TraceCarrier) : undefined;
}

/** `{ trace }` for job data when a span is active, else nothing: job data stays as it was. */
export function traceData(): { trace?: TraceCarrier } {
  const carrier = activeCarrier();
  return carrier === undefined ? {} : { trace: carrier };
}

/** Sets attributes on the active span (a no-op when none records). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** A `traceparent` header (and `tracestate`) as a carrier, when it has the W3C form. */
export function carrierFromHeaders(
  headers: Record<string, string | string[] | undefined>,
): TraceCarrier | undefined {
  const parent = headers.traceparent;
  if (typeof parent !== 'string' || !/^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/.test(parent.trim()))
    return undefined;
  const state = headers.tracestate;
  return { traceparent: parent.trim(), ...(typeof state === 'string' ? { tracestate: state } : {}) };
}
