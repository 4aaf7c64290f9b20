/**
 * A real HTTP server on 127.0.0.1, port 0, that records every request and answers with
 * a programmable reply (the API envelope by default). Tests talk to it through the real
 * client stack (undici, auth, limiter, envelope), so what it records is what a platform
 * would receive.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** The path as sent, still percent-encoded, without the query string. */
  path: string;
  /** Decoded query parameters (the last value wins for repeated names). */
  query: Record<string, string>;
  /** Header names are lower-case (node's IncomingMessage). */
  headers: IncomingHttpHeaders;
  /** The raw body text; empty when none was sent. */
  rawBody: string;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  body: unknown;
}

/** What the server answers. */
export interface Reply {
  /** @defaultValue 200 */
  status?: number;
  headers?: Record<string, string>;
  /** Serialised as JSON unless it is a string (sent as is, to imitate a proxy's page). */
  body: unknown;
}

/** Computes the reply to one request. */
export type Responder = (req: RecordedRequest) => Reply | Promise<Reply>;

export interface RecordingServer {
  /** `http://127.0.0.1:<port>`: pass it as the client's baseUrl. */
  readonly url: string;
  /** Every request so far, oldest first. */
  readonly requests: RecordedRequest[];
  /** The most recent request; throws when there is none, so a test cannot pass on nothing. */
  last(): RecordedRequest;
  /** Replaces the reply of every following request. */
  respond(responder: Responder): void;
  /** Answers the following requests with a success envelope carrying `data`. */
  respondWithData(data: unknown): void;
  /** Forgets recorded requests and restores the default reply. */
  reset(): void;
  close(): Promise<void>;
}

/** The success envelope of spec §2 around `data`. */
export function envelope(data: unknown): { success: true; error_code: 1; error_msg: ''; data: unknown } {
  return { success: true, error_code: 1, error_msg: '', data };
}

const defaultResponder: Responder = () => ({ body: envelope({}) });

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function record(req: IncomingMessage, rawBody: string): RecordedRequest {
  const raw = req.url ?? '/';
  const queryAt = raw.indexOf('?');
  const path = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const query = Object.fromEntries(new URLSearchParams(queryAt === -1 ? '' : raw.slice(queryAt + 1)));
  return { method: req.method ?? '', path, query, headers: req.headers, rawBody, body: parseJson(rawBody) };
}

function send(res: ServerResponse, reply: Reply): void {
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  const contentType = typeof reply.body === 'string' ? 'text/html' : 'application/json';
  res.writeHead(reply.status ?? 200, { 'content-type': contentType, ...reply.headers });
  res.end(text);
}

/** Starts a recording server; close it in `afterAll`/`afterEach`. */
export async function startRecordingServer(): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  let responder = defaultResponder;

  const server = createServer((req, res) => {
    void (async () => {
      try {
        const recorded = record(req, await readBody(req));
        requests.push(recorded);
        send(res, await responder(recorded));
      } catch (err) {
        // A throwing responder is a test bug: answer 500 so the client fails loudly.
        send(res, { status: 500, body: `responder failed: ${String(err)}` });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    last() {
      const request = requests.at(-1);
      if (request === undefined) throw new Error('recording server: no request was received');
      return request;
    },
    respond(next) {
      responder = next;
    },
    respondWithData(data) {
      responder = () => ({ body: envelope(data) });
    },
    reset() {
      requests.length = 0;
      responder = defaultResponder;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
