import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { HttpSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}
type Handler = (req: Seen) => {
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
  reset?: boolean;
};

let server: Server;
let base: string;
let handler: Handler = () => ({ body: [] });
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const request = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      };
      seen.push(request);
      const reply = handler(request);
      if (reply.reset === true) {
        req.socket.destroy();
        return;
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

// Job specs read only the variables the allow-list names (each of these looks like a credential).
const env = {
  API_TOKEN: 'tok-secret-123',
  API_KEY: 'key-secret-456',
  ROWBRIDGE_SOURCE_ENV_ALLOW: 'API_TOKEN,API_KEY,NOT_SET_API_KEY',
};
const fastRetry = { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 5 };
function read(spec: Omit<HttpSourceSpec, 'type'>, extra: { since?: unknown; cursorField?: string } = {}) {
  seen.length = 0;
  return collect(
    createSource({ type: 'http', ...spec }, { env, baseDir: '/', httpRetry: fastRetry, ...extra }),
  );
}
const people = Array.from({ length: 5 }, (_, i) => ({ id: i + 1, updated: `2024-01-0${i + 1}` }));

describe('http source', () => {
  it('pages by page number until a short page, sending resolved auth headers and query values', async () => {
    handler = (req) => {
      const page = Number(req.query.page);
      const size = Number(req.query.pageSize);
      return { body: { data: { items: people.slice((page - 1) * size, page * size) } } };
    };
    const items = await read({
      url: `${base}/people`,
      headers: { Authorization: 'Bearer ${API_TOKEN}', 'X-Static': 'plain' },
      query: { key: '${API_KEY}', active: 'true' },
      itemsPath: 'data.items',
      pagination: { type: 'page', pageSize: 2 },
    });
    expect(items.map((i) => [i.data.id, i.position.page])).toEqual([
      [1, 1],
      [2, 1],
      [3, 2],
      [4, 2],
      [5, 3],
    ]);
    expect(seen.map((r) => r.query)).toEqual(
      [1, 2, 3].map((page) => ({ key: 'key-secret-456', active: 'true', page: String(page), pageSize: '2' })),
    );
    expect(
      seen.every(
        (r) => r.headers.authorization === 'Bearer tok-secret-123' && r.headers['x-static'] === 'plain',
      ),
    ).toBe(true);
  });

  it('stops at an empty page when the last full page ends the data', async () => {
    handler = (req) => ({ body: people.slice((Number(req.query.p) - 1) * 5, Number(req.query.p) * 5) });
    const items = await read({
      url: `${base}/all`,
      pagination: { type: 'page', pageParam: 'p', sizeParam: 'n', pageSize: 5 },
    });
    expect(items).toHaveLength(5);
    expect(seen.map((r) => r.query.p)).toEqual(['1', '2']);
  });

  it('follows a next cursor until it is missing', async () => {
    handler = (req) => {
      const after = Number(req.query.after ?? 0);
      const next = after + 2 < people.length ? String(after + 2) : null;
      return { body: { results: people.slice(after, after + 2), paging: { next } } };
    };
    const items = await read({
      url: `${base}/c`,
      itemsPath: 'results',
      pagination: { type: 'cursor', cursorParam: 'after', cursorPath: 'paging.next' },
    });
    expect(items.map((i) => i.data.id)).toEqual([1, 2, 3, 4, 5]);
    expect(seen.map((r) => r.query.after)).toEqual([undefined, '2', '4']);
  });

  it('sends paging in a JSON body for POST and respects maxPages', async () => {
    handler = () => ({ body: people.slice(0, 2) });
    const items = await read({
      url: `${base}/search`,
      method: 'POST',
      pagination: { type: 'page', pageSize: 2, startPage: 3 },
      maxPages: 2,
    });
    expect(items).toHaveLength(4);
    expect(seen.map((r) => [r.method, JSON.parse(r.body) as unknown])).toEqual([
      ['POST', { page: 3, pageSize: 2 }],
      ['POST', { page: 4, pageSize: 2 }],
    ]);
  });

  it('retries 503 answers and then reads on', async () => {
    let calls = 0;
    handler = () => (++calls <= 2 ? { status: 503, body: 'busy' } : { body: people });
    const items = await read({ url: `${base}/flaky` });
    expect(items).toHaveLength(5);
    expect(seen).toHaveLength(3);
  });

  it('retries a connection reset', async () => {
    let calls = 0;
    handler = () => (++calls === 1 ? { reset: true, body: null } : { body: people });
    expect(await read({ url: `${base}/reset` })).toHaveLength(5);
    expect(seen).toHaveLength(2);
  });

  it('fails after the retries with the status and a URL free of secrets', async () => {
    handler = () => ({ status: 500, body: { echo: 'tok-secret-123' } });
    const err = await rejection(
      read({
        url: `${base}/down?token=literal-secret`,
        headers: { Authorization: 'Bearer ${API_TOKEN}' },
        query: { key: '${API_KEY}' },
      }),
    );
    expect(seen).toHaveLength(3);
    expect(err.code).toBe('SOURCE_UNAVAILABLE');
    expect((err as { status?: number }).status).toBe(500);
    // Credential parameters masked as the dashboard masks them; the others would show.
    expect(err.message).toBe(
      `http source: GET ${base}/down?token=••••••&key=•••••• (page 1) answered HTTP 500 after 3 attempts`,
    );
    for (const secret of ['tok-secret-123', 'key-secret-456', 'literal-secret'])
      expect(JSON.stringify([err.message, err.stack])).not.toContain(secret);
  });

  it('resolves env references in the URL and masks them in messages', async () => {
    handler = () => ({ status: 403, body: {} });
    const err = await rejection(read({ url: `${base}/v1/\${API_TOKEN}/items` }));
    expect(seen.map((r) => r.path)).toEqual(['/v1/tok-secret-123/items']);
    expect(err.message).toBe(`http source: GET ${base}/v1/***/items (page 1) answered HTTP 403`);
  });

  it('does not retry a 404', async () => {
    handler = () => ({ status: 404, body: {} });
    const err = await rejection(read({ url: `${base}/missing` }));
    expect(seen).toHaveLength(1);
    expect(err.message).toBe(`http source: GET ${base}/missing (page 1) answered HTTP 404`);
  });

  it('names an unset environment variable without reading on', async () => {
    const err = await rejection(
      read({ url: `${base}/x`, headers: { Authorization: 'Bearer ${NOT_SET_API_KEY}' } }),
    );
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toBe(
      'http source header "Authorization" (source.headers.Authorization) refers to ${NOT_SET_API_KEY}, but the environment variable NOT_SET_API_KEY is not set',
    );
    expect(seen).toHaveLength(0);
  });

  it('explains a response that is not an array, or not JSON', async () => {
    handler = () => ({ body: { rows: [] } });
    expect((await rejection(read({ url: `${base}/obj` }))).message).toBe(
      `GET ${base}/obj (page 1): the response is an object, not an array; set itemsPath to the array inside it`,
    );
    handler = () => ({ body: '<html>proxy error</html>', headers: { 'content-type': 'text/html' } });
    expect((await rejection(read({ url: `${base}/html` }))).message).toBe(
      `GET ${base}/html (page 1): the response is not JSON (text/html)`,
    );
  });

  it('yields items that are not objects as invalid records, and filters by the incremental cursor', async () => {
    handler = () => ({ body: [...people, 7] });
    const items = await read({ url: `${base}/inc` }, { since: '2024-01-03', cursorField: 'updated' });
    expect(items.map((i) => i.data.id ?? i.error?.message)).toEqual([
      4,
      5,
      `GET ${base}/inc (page 1): item 6: expected a JSON object, found a number`,
    ]);
    expect(items[0]?.cursor).toBe('2024-01-04');
  });
});
