/**
 * Whether a CLI process traces (docs/tracing.md): its own file, so that asking imports
 * nothing of OpenTelemetry.
 */
/** An OTLP endpoint, or a traces exporter other than none, unless OTEL_SDK_DISABLED is true. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter !== undefined && exporter !== '') return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
