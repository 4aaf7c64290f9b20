/**
 * The HTTP side: one request listener that logs the request, draws its fault, checks the
 * IP allow-list, authenticates, applies the limits, runs the route and answers with the
 * envelope. Business failures are HTTP 200 with `success: false` (platform notes §1);
 * only an unknown path (404), a wrong method (405), an injected gateway error (5xx) and
 * an emulator bug (500) use other statuses.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { authenticate, resolveApp } from './auth.ts';
import type { EmulatorDeps } from './deps.ts';
import { EmulatorError, errorEnvelope, okEnvelope } from './emulator-error.ts';
import type { FaultInjector, FaultKind } from './faults.ts';
import type { RequestLimits } from './limits.ts';
import { handleTokenRequest, parseTokenParams, tokenErrorAnswer } from './oauth-token-endpoint.ts';
import type { RouteContext, Router } from './router.ts';

/** One request as the emulator saw it. `credentialId` identifies the credential, never its secret. */
export interface RequestLogEntry {
  method: string;
  /** Path without the query string and without a private deployment's `/api` prefix. */
  path: string;
  /** Envelope code answered (1 on success); undefined when no envelope was sent. */
  errorCode: number | undefined;
  credentialId: string | undefined;
  /** The injected fault, if one hit the request. */
  fault: FaultKind | undefined;
  httpStatus: number | undefined;
}

export interface ServerDeps extends EmulatorDeps {
  router: Router;
  limits: RequestLimits;
  faults: FaultInjector;
  requests: RequestLogEntry[];
  baseUrl: () => string;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new EmulatorError(10001, `request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(
  res: ServerResponse,
  entry: RequestLogEntry,
  status: number,
  payload: unknown,
  now: number,
): void {
  const body = JSON.stringify(payload);
  entry.httpStatus = status;
  res.writeHead(status, {
    date: new Date(now).toUTCString(),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function clientIp(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

function parseJson(raw: string): unknown {
  if (raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new EmulatorError(10001, 'request body is not valid JSON');
  }
}

export function createRequestListener(deps: ServerDeps): RequestListener {
  const { router, limits, faults, options } = deps;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    // A private deployment serves the same API under /api (spec §1).
    const path = url.pathname.startsWith('/api/') ? url.pathname.slice(4) : url.pathname;
    const method = req.method ?? 'GET';
    const entry: RequestLogEntry = {
      method,
      path,
      errorCode: undefined,
      credentialId: undefined,
      fault: undefined,
      httpStatus: undefined,
    };
    deps.requests.push(entry);
    if (deps.requests.length > options.requestLogLimit) {
      deps.requests.splice(0, deps.requests.length - Math.floor(options.requestLogLimit * 0.9));
    }
    const answer = (status: number, errorCode: number, payload: unknown): void => {
      entry.errorCode = errorCode;
      // `Date` on the emulator's clock (options.now), the one its `utime` and `ctime` are
      // on, not Node's: a test moves the platform's clock and its answers say so.
      send(res, entry, status, payload, options.now());
    };

    let raw: string;
    try {
      raw = await readBody(req);
    } catch (error) {
      if (error instanceof EmulatorError)
        answer(413, error.errorCode, errorEnvelope(error.errorCode, error.message));
      return;
    }
    const isToken = path === '/oauth2/token';
    const match = path.startsWith('/v3/')
      ? router.match(method, path.slice(3))
      : ({ kind: 'not-found' } as const);
    const decision = faults.decide(match.kind === 'found' && match.write);
    if (decision.latencyMs > 0) {
      // A client that goes away while its answer is held back (a process killed in the
      // middle of a request) frees the timer: nobody is left to answer.
      const gone = new AbortController();
      const leave = () => gone.abort();
      req.socket.once('close', leave);
      try {
        await delay(decision.latencyMs, undefined, { signal: gone.signal });
      } catch {
        return;
      } finally {
        req.socket.off('close', leave);
      }
    }
    if (decision.kind === 'reset-before-apply') {
      entry.fault = decision.kind;
      req.socket.destroy();
      return;
    }
    if (decision.kind === 'http-5xx') {
      entry.fault = decision.kind;
      entry.httpStatus = decision.httpStatus;
      res.writeHead(decision.httpStatus, {
        date: new Date(options.now()).toUTCString(),
        'content-type': 'text/html',
      });
      res.end(`<html><body><h1>${decision.httpStatus} injected gateway error</h1></body></html>`);
      return;
    }

    try {
      const allowList = options.ipAllowList;
      if (allowList !== undefined && !allowList.includes(clientIp(req))) {
        throw new EmulatorError(
          isToken ? 600113 : 10000,
          `client IP ${clientIp(req)} is not on the allow-list`,
        );
      }
      if (isToken) {
        if (method !== 'POST')
          return answer(405, 600000, errorEnvelope(600000, 'the token endpoint takes POST'));
        const grant = handleTokenRequest(
          deps.state,
          deps.ids,
          parseTokenParams(raw, req.headers['content-type']),
          options.accessTokenTtlMs,
          options.now(),
        );
        return answer(200, 1, grant);
      }
      if (match.kind === 'not-found')
        return answer(404, 10001, errorEnvelope(10001, `no endpoint ${method} ${path}`));
      if (match.kind === 'method-not-allowed') {
        return answer(
          405,
          10001,
          errorEnvelope(10001, `${path} does not take ${method}; it takes ${match.allowed.join(', ')}`),
        );
      }
      const principal = authenticate(deps.state, req.headers, options.headerPrefix, options.now());
      entry.credentialId = principal.credentialId;
      limits.admit(principal.credentialId);
      if (decision.kind === 'error-99999') {
        entry.fault = decision.kind;
        throw new EmulatorError(99999, 'data operation exception (injected fault); nothing was applied');
      }
      // Any write may change what a cached row query would answer.
      if (match.write) deps.state.revision += 1;
      const ctx: RouteContext = {
        params: match.params,
        query: url.searchParams,
        body: parseJson(raw),
        principal,
        baseUrl: deps.baseUrl(),
      };
      await options.beforeHandle?.({ method, path, body: ctx.body });
      const route = match.route;
      const data =
        route.scope === 'app'
          ? route.handler({
              ...ctx,
              app: resolveApp(deps.state, principal, req.headers, options.headerPrefix),
            })
          : route.handler(ctx);
      if (decision.kind === 'reset-after-apply') {
        // The write is applied; the client never learns it: the ambiguous case.
        entry.fault = decision.kind;
        entry.errorCode = 1;
        req.socket.destroy();
        return;
      }
      answer(200, 1, okEnvelope(data));
    } catch (error) {
      if (error instanceof EmulatorError) {
        return answer(
          200,
          error.errorCode,
          isToken ? tokenErrorAnswer(error) : errorEnvelope(error.errorCode, error.message),
        );
      }
      const message = error instanceof Error ? error.message : String(error);
      answer(500, 0, errorEnvelope(0, `emulator internal error: ${message}`));
    }
  }

  return (req, res) => {
    req.on('error', () => req.socket.destroy());
    handle(req, res).catch(() => req.socket.destroy());
  };
}
