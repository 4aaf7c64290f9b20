import type { Dispatcher, request as undiciRequest } from 'undici';
import { ConfigError, networkError } from '../ground/errors.ts';
import { inSpan } from '../ground/tracing.ts';
import { readEnvelopeStatus } from './envelope.ts';
import type { RawResponse } from './envelope.ts';
import { JsonBody } from './json-body.ts';
import type { HttpMethod } from './types.ts';

/** Transport settings. */
export interface TransportOptions {
  /**
   * Where `/v3/...` paths are appended: the SaaS base URL, or `{host}/api` for a private
   * deployment (see {@link resolveBaseUrl}).
   */
  baseUrl: string;
  /** An undici dispatcher (a MockAgent in tests); by default a keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** @defaultValue 10_000 */
  connectTimeoutMs?: number;
  /** Time to wait for the response headers. @defaultValue 30_000 */
  headersTimeoutMs?: number;
  /** Time between body chunks. @defaultValue 30_000 */
  bodyTimeoutMs?: number;
  /** Sockets per origin. @defaultValue 16 */
  connections?: number;
  /** @defaultValue 30_000 */
  keepAliveTimeoutMs?: number;
}

export interface TransportRequest {
  method: HttpMethod;
  /** Path beginning with `/v3/` (or any absolute URL, for the OAuth token endpoint). */
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  headers?: Record<string, string>;
  /** Sent as it is when a string (form bodies), as JSON when a {@link JsonBody} or anything else. */
  body?: unknown;
  /** Whether the request changes data: decides ambiguous vs transient on failures. */
  isWrite: boolean;
  signal?: AbortSignal | undefined;
}

export interface Transport {
  send(req: TransportRequest): Promise<RawResponse>;
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * Base URL of a deployment: SaaS hosts serve `/v3/...` at their root; a private
 * deployment serves it under `/api` (spec §1, platform notes §1).
 */
export function resolveBaseUrl(options: { baseUrl?: string; privateHost?: string }): string {
  const raw =
    options.privateHost !== undefined ? `${options.privateHost.replace(/\/+$/, '')}/api` : options.baseUrl;
  if (raw === undefined || raw === '') throw new ConfigError('API base URL is not set (ROWBRIDGE_API_URL)');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`API base URL is not a URL (ROWBRIDGE_API_URL): expected http(s)://host[/api]`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`API base URL must be http or https, got ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ConfigError(
      'API base URL must not carry credentials: use ROWBRIDGE_APPKEY/ROWBRIDGE_SIGN or a token',
    );
  }
  // Paths are appended to the base: a query would end up in the middle of every URL. Its
  // text is not repeated here: a token pasted into it must not reach a message.
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(
      'API base URL must not carry a query string or fragment (ROWBRIDGE_API_URL): expected http(s)://host[/api]; credentials go in ROWBRIDGE_APPKEY/ROWBRIDGE_SIGN or a token',
    );
  }
  // Paths carry their own /v3 (platform-notes §1): a base URL copied with it would ask
  // for /v3/v3/... and get 404s, so a trailing /v3 is dropped here.
  return url.toString().replace(/\/+$/, '').replace(/\/v3$/i, '');
}

function buildUrl(baseUrl: string, path: string, query: TransportRequest['query']): string {
  const url = /^https?:\/\//.test(path) ? new URL(path) : new URL(`${baseUrl}${path}`);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url.toString();
}

/** undici `request` on a keep-alive pool, with timeouts, turning failures into ApiErrors. */
export function createTransport(options: TransportOptions): Transport {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const owned = options.dispatcher === undefined;
  // undici, with the Node internals it brings (about 8 MB), is imported with the first
  // request: a worker waiting for work holds none of it.
  let http: Promise<{ request: typeof undiciRequest; dispatcher: Dispatcher }> | undefined;
  const openHttp = () =>
    (http ??= import('undici').then(({ Agent, request }) => ({
      request,
      dispatcher:
        options.dispatcher ??
        new Agent({
          connect: { timeout: options.connectTimeoutMs ?? 10_000 },
          connections: options.connections ?? 16,
          keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
        }),
    })));
  const headersTimeout = options.headersTimeoutMs ?? 30_000;
  const bodyTimeout = options.bodyTimeoutMs ?? 30_000;

  async function send(req: TransportRequest): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    let body: string | Buffer | undefined;
    if (req.body !== undefined) {
      if (typeof req.body === 'string') {
        body = req.body;
      } else if (req.body instanceof JsonBody) {
        body = req.body.bytes;
        headers['content-type'] = 'application/json';
      } else {
        body = JSON.stringify(req.body);
        headers['content-type'] = 'application/json';
      }
    }
    const ref = { method: req.method, path: stripQuery(req.path), isWrite: req.isWrite };
    // The path without its query: ids in it name rows, never credentials (signed queries
    // carry those, and the query is left out).
    return inSpan(
      `${req.method} ${ref.path}`,
      { 'http.request.method': req.method, 'url.path': ref.path, 'http.route': ref.path },
      async (span) => {
        const res = await exchange(req, ref, headers, body);
        span.setAttribute('http.response.status_code', res.status);
        const code = platformErrorCode(res);
        if (code !== undefined) span.setAttribute('rowbridge.platform.error_code', code);
        return res;
      },
    );
  }

  async function exchange(
    req: TransportRequest,
    ref: { method: HttpMethod; path: string; isWrite: boolean },
    headers: Record<string, string>,
    body: string | Buffer | undefined,
  ): Promise<RawResponse> {
    const { request, dispatcher } = await openHttp();
    try {
      const res = await request(buildUrl(baseUrl, req.path, req.query), {
        method: req.method,
        headers,
        dispatcher,
        headersTimeout,
        bodyTimeout,
        ...(body === undefined ? {} : { body }),
        ...(req.signal === undefined ? {} : { signal: req.signal }),
      });
      const text = await res.body.text();
      let parsed: unknown = text;
      let json = false;
      if (text !== '') {
        try {
          parsed = JSON.parse(text);
          json = true;
        } catch {
          json = false;
        }
      }
      return { status: res.statusCode, headers: res.headers, body: parsed, json };
    } catch (err) {
      if (req.signal?.aborted === true) throw err;
      throw networkError(err, ref);
    }
  }

  return {
    send,
    baseUrl,
    async close() {
      if (owned && http !== undefined) await (await http).dispatcher.close();
    },
  };
}

/** The platform's error code of a failed answer (its envelope), for the request's span. */
function platformErrorCode(res: RawResponse): number | undefined {
  if (!res.json || typeof res.body !== 'object' || res.body === null || Array.isArray(res.body))
    return undefined;
  const status = readEnvelopeStatus(res.body);
  return status.ok ? undefined : status.code;
}

function stripQuery(path: string): string {
  const i = path.indexOf('?');
  return i === -1 ? path : path.slice(0, i);
}
