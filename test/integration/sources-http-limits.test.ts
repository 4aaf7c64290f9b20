import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { HttpSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let base: string;
let handler: Handler = (_req, res) => res.end('[]');
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  // A stalled answer of a test must not keep the server from closing.
  for (const socket of sockets) socket.destroy();
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const noRetry = { retries: 0, minTimeoutMs: 1, maxTimeoutMs: 1 };
function open(spec: Omit<HttpSourceSpec, 'type'>, signal?: AbortSignal) {
  return createSource(
    { type: 'http', ...spec },
    {
      env: { API_KEY: 'key-secret-456', ROWBRIDGE_SOURCE_ENV_ALLOW: 'API_KEY' },
      baseDir: '/',
      httpRetry: noRetry,
      signal,
    },
  );
}

const MiB = 1024 * 1024;
const element = `${JSON.stringify({ id: 1, text: 'x'.repeat(1000) })},`;

/** Writes an endless JSON array (up to `offer` bytes) honouring backpressure; resolves with bytes sent. */
function endlessArray(res: ServerResponse, offer: number): Promise<number> {
  return new Promise((resolve) => {
    let sent = 0;
    let stopped = false;
    res.on('close', () => {
      stopped = true;
      resolve(sent);
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = `${element.repeat(64)}`;
    const pump = (): void => {
      if (sent === 0) {
        res.write('[');
        sent += 1;
      }
      while (!stopped && sent < offer) {
        sent += Buffer.byteLength(chunk);
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!stopped) res.end('{"id":2}]');
    };
    pump();
  });
}

describe('http source limits', () => {
  it('stops a body past maxResponseBytes, naming host, setting and limit, long before the server is done', async () => {
    let sent: Promise<number> = Promise.resolve(0);
    handler = (_req, res) => {
      sent = endlessArray(res, 1024 * MiB);
    };
    const err = await rejection(
      collect(
        open({
          url: `${base}/huge?token=literal-secret`,
          query: { key: '${API_KEY}' },
          maxResponseBytes: MiB,
        }),
      ),
    );
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toBe(
      `GET ${base}/huge?token=••••••&key=•••••• (page 1): the response body is larger than source.maxResponseBytes (1048576 bytes); page the API (source.pagination) or raise maxResponseBytes`,
    );
    expect(err.message).not.toMatch(/literal-secret|key-secret/);
    // The client dropped the connection: of the 1 GiB offered, the server got out the
    // cap plus what socket buffers on both ends hold, not the whole body.
    const bytes = await sent;
    expect(bytes).toBeGreaterThan(MiB);
    expect(bytes).toBeLessThan(32 * MiB);
  });

  it('refuses a declared content-length past the cap before reading the body', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * MiB) });
      res.write('[');
    };
    const err = await rejection(collect(open({ url: `${base}/declared`, maxResponseBytes: MiB })));
    expect(err.message).toBe(
      `GET ${base}/declared (page 1): the response (content-length 2097152) is larger than source.maxResponseBytes (1048576 bytes); page the API (source.pagination) or raise maxResponseBytes`,
    );
  });

  it('streams: the first items arrive while the server still holds the rest of the page', async () => {
    let release: () => void = () => undefined;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":{"items":[{"id":1},{"id":2},');
      release = () => res.end('{"id":3}]},"next":null}');
    };
    const source = open({ url: `${base}/slow`, itemsPath: 'data.items' });
    const first = await source.next();
    const second = await source.next();
    expect([first.value?.data, second.value?.data]).toEqual([{ id: 1 }, { id: 2 }]);
    release();
    const rest = await collect(source);
    expect(rest.map((i) => i.data)).toEqual([{ id: 3 }]);
  });

  it('follows a next cursor that comes after a large items array', async () => {
    handler = (req, res) => {
      const after = new URL(req.url ?? '/', 'http://x').searchParams.get('after');
      const items = Array.from({ length: 300 }, (_, i) => ({
        id: `${after ?? 'a'}${i}`,
        pad: 'y'.repeat(100),
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items, paging: { next: after === null ? 'b' : null, total: 600 } }));
    };
    const items = await collect(
      open({
        url: `${base}/c`,
        itemsPath: 'items',
        pagination: { type: 'cursor', cursorParam: 'after', cursorPath: 'paging.next' },
      }),
    );
    expect(items).toHaveLength(600);
    expect(items[300]?.data.id).toBe('b0');
  });

  it('gives up on a server that sends no headers, naming headersTimeoutMs', async () => {
    handler = () => undefined;
    const err = await rejection(collect(open({ url: `${base}/silent`, headersTimeoutMs: 100 })));
    expect(err.code).toBe('SOURCE_UNAVAILABLE');
    expect(err.message).toBe(
      `http source: GET ${base}/silent (page 1) failed: no response headers within 100 ms (source.headersTimeoutMs) after 1 attempts`,
    );
  });

  it('stops reading a body in flight when the run is aborted', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"id":1},');
    };
    const controller = new AbortController();
    const source = open({ url: `${base}/half` }, controller.signal);
    expect((await source.next()).value?.data).toEqual({ id: 1 });
    const rest = collect(source);
    controller.abort(new Error('worker stopping'));
    await expect(rest).rejects.toThrow('worker stopping');
  });

  it('gives up on a body that stalls, naming bodyTimeoutMs', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"id":1},');
    };
    const source = open({ url: `${base}/stall`, bodyTimeoutMs: 100 });
    expect((await source.next()).value?.data).toEqual({ id: 1 });
    const err = await rejection(collect(source));
    expect(err.code).toBe('SOURCE_UNAVAILABLE');
    expect(err.message).toMatch(
      new RegExp(
        `^http source: GET ${base}/stall \\(page 1\\) broke off after \\d+ bytes of the response: the response body stalled for 100 ms \\(source.bodyTimeoutMs\\)$`,
      ),
    );
  });

  it('gives up on a connection that never completes its TLS handshake, naming connectTimeoutMs', async () => {
    const mute: TcpServer = createTcpServer(() => undefined);
    const held: Socket[] = [];
    mute.on('connection', (s) => held.push(s));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(mute.address() as AddressInfo).port}/tls`;
    try {
      const err = await rejection(collect(open({ url, connectTimeoutMs: 100 })));
      expect(err.message).toBe(
        `http source: GET ${url} (page 1) failed: no connection within 100 ms (source.connectTimeoutMs) after 1 attempts`,
      );
    } finally {
      for (const s of held) s.destroy();
      await new Promise((resolve) => mute.close(resolve));
    }
  });

  it('stops a request in flight when the run is aborted, with the default timeouts', async () => {
    let arrived: () => void = () => undefined;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    handler = () => arrived();
    const controller = new AbortController();
    const read = collect(open({ url: `${base}/forever` }, controller.signal));
    await requested;
    controller.abort(new Error('worker stopping'));
    await expect(read).rejects.toThrow('worker stopping');
  });
});
