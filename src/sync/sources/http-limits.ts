/**
 * Time and size limits of the http source, so a silent or endless API cannot hang a run
 * or fill the worker's memory. Defaults suit a paged JSON API; a job spec overrides each.
 */
import type { HttpSourceSpec } from './source-spec.ts';

/** The limits one read of an http source runs under. */
export interface HttpLimits {
  /** Longest wait for the TCP connection and TLS handshake. */
  connectTimeoutMs: number;
  /** Longest wait from sending a request to its response headers. */
  headersTimeoutMs: number;
  /** Longest pause between two pieces of a response body. */
  bodyTimeoutMs: number;
  /** Largest response body read; a larger one fails the read instead of being buffered. */
  maxResponseBytes: number;
}

/** The defaults of the job spec's http source settings. */
export const HTTP_LIMIT_DEFAULTS: Readonly<HttpLimits> = {
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 60_000,
  bodyTimeoutMs: 60_000,
  maxResponseBytes: 256 * 1024 * 1024,
};

/** The limits of a spec, defaults filled in. */
export function httpLimits(spec: HttpSourceSpec): HttpLimits {
  return {
    connectTimeoutMs: spec.connectTimeoutMs ?? HTTP_LIMIT_DEFAULTS.connectTimeoutMs,
    headersTimeoutMs: spec.headersTimeoutMs ?? HTTP_LIMIT_DEFAULTS.headersTimeoutMs,
    bodyTimeoutMs: spec.bodyTimeoutMs ?? HTTP_LIMIT_DEFAULTS.bodyTimeoutMs,
    maxResponseBytes: spec.maxResponseBytes ?? HTTP_LIMIT_DEFAULTS.maxResponseBytes,
  };
}
