/**
 * Child process of bench/client.ts: a bare node:http server answering
 * `POST /v3/app/worksheets/{id}/rows/list` with a fixed success envelope holding ten rows
 * in the spec's shape (spec §2), so the client's cost is measured against a server that
 * costs as little as possible. Prints `{url}` once listening; answers `{cmd: "stats"}`
 * with the number of requests served. Anything else is answered with error 10001 and
 * counted as `rejected`, so a benchmark that sent wrong requests shows it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveJsonCommands } from './serve-json-commands.ts';

const LIST_PATH = /^\/v3\/app\/worksheets\/[^/]+\/rows\/list$/;

const user = { accountId: 'a0000000-0000-4000-8000-000000000001', fullname: 'Bench Admin' };
const rows = Array.from({ length: 10 }, (_, i) => ({
  id: `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  fields: [
    { id: '65f000000000000000000001', value: `SO-${100_000 + i}`, type: '2', controlName: 'Order number' },
    { id: '65f000000000000000000002', value: 'Acme GmbH', type: '2', controlName: 'Customer' },
    { id: '65f000000000000000000003', value: `${(i + 1) * 12.5}`, type: '6', controlName: 'Amount' },
  ],
  _createdBy: user,
  _owner: user,
  _updatedBy: user,
  _createdAt: '2026-03-01T08:00:00.000Z',
  _updatedAt: '2026-03-01T08:00:00.000Z',
}));
const okBody = JSON.stringify({
  success: true,
  error_code: 1,
  error_msg: '',
  data: { rows, total: 10, pageIndex: 1, pageSize: 10 },
});
const badBody = JSON.stringify({
  success: false,
  error_code: 10001,
  error_msg: 'bench server serves POST .../rows/list only',
  data: null,
});

let served = 0;
let rejected = 0;
const server = createServer((req, res) => {
  // Drain the body before answering so keep-alive sockets stay reusable.
  req.resume();
  req.on('end', () => {
    const ok = req.method === 'POST' && LIST_PATH.test((req.url ?? '').split('?')[0] ?? '');
    if (ok) served += 1;
    else rejected += 1;
    const body = ok ? okBody : badBody;
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

await serveJsonCommands(
  { url: `http://127.0.0.1:${port}` },
  () => ({ served, rejected }),
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);
