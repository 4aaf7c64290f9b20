/**
 * OpenTelemetry for a CLI process, off unless the standard OTEL_* variables ask for it
 * (docs/tracing.md). The SDK, the OTLP exporter and the async context manager are imported
 * only then: a worker without tracing loads none of them (the idle worker's memory).
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * Registers the tracer provider, W3C propagation and the async context manager, exporting
 * to `exporter` (tests: an in-memory one) or as OTEL_TRACES_EXPORTER says (otlp by
 * default, console). Resolves to what flushes and stops it.
 */
export async function startTracing(
  env: NodeJS.ProcessEnv,
  exporter?: SpanExporter,
): Promise<() => Promise<void>> {
  const [api, sdk, core, hooks, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
  ]);
  let chosen = exporter;
  if (chosen === undefined) {
    const kind = env.OTEL_TRACES_EXPORTER ?? 'otlp';
    if (kind === 'console') chosen = new sdk.ConsoleSpanExporter();
    else if (kind === 'otlp') {
      // Reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS and _TIMEOUT itself.
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      chosen = new OTLPTraceExporter();
    } else throw new Error(`OTEL_TRACES_EXPORTER must be otlp, console or none, got "${kind}"`);
  }
  const processor =
    exporter === undefined
      ? new sdk.BatchSpanProcessor({ exporter: chosen })
      : new sdk.SimpleSpanProcessor({ exporter: chosen });
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'rowbridge' }),
    spanProcessors: [processor],
  });
  const contextManager = new hooks.AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  return async () => {
    await provider.shutdown();
    api.trace.disable();
    api.propagation.disable();
    api.context.disable();
  };
}
