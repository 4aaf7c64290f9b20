/**
 * Attack: an http source pointed at this machine or an internal network (SSRF), e.g. the
 * dashboard on loopback or a cloud metadata address (issue 22, item 10). With
 * ROWBRIDGE_SOURCE_DENY_PRIVATE=1 the read is refused, without a request reaching the
 * target, whether the URL holds the address, a spelling of it or a name that resolves to
 * it; without the setting the same URLs are read as before. The source follows no
 * redirect, so a 3xx cannot lead it to a target the URL did not name.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

describe('ROWBRIDGE_SOURCE_DENY_PRIVATE', () => {
  let server: Server;
  let port: number;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/start') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/items` }).end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('[{"id":1},{"id":2}]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const read = (url: string, env: Record<string, string>) =>
    collect(createSource({ type: 'http', url }, { env, baseDir: '/', httpRetry: { retries: 0 } }));

  it('refuses loopback by address, by other spellings of it and by a name resolving to it', async () => {
    seen.length = 0;
    for (const url of [
      `http://127.0.0.1:${port}/items`,
      `http://localhost:${port}/items`,
      `http://0x7f000001:${port}/items`,
      `http://[::1]:${port}/items`,
      `http://[::ffff:127.0.0.1]:${port}/items`,
      `http://169.254.169.254:${port}/latest/meta-data`,
      `http://10.1.2.3:${port}/items`,
    ]) {
      const err = await rejection(read(url, { ROWBRIDGE_SOURCE_DENY_PRIVATE: '1' }));
      expect(err.code, url).toBe('SOURCE_CONFIG');
      expect(err.message).toContain('loopback, private or link-local address');
      expect(err.message).toContain('ROWBRIDGE_SOURCE_DENY_PRIVATE');
    }
    expect(seen).toEqual([]);
  });

  it('without the setting (or with it 0) the same loopback URLs are read', async () => {
    for (const env of [{}, { ROWBRIDGE_SOURCE_DENY_PRIVATE: '0' }]) {
      for (const host of ['127.0.0.1', 'localhost']) {
        const items = await read(`http://${host}:${port}/items`, env);
        expect(items.map((item) => item.data)).toEqual([{ id: 1 }, { id: 2 }]);
      }
    }
  });

  it('follows no redirect: a 3xx fails the read and its target gets no request', async () => {
    seen.length = 0;
    const err = await rejection(read(`http://127.0.0.1:${port}/start`, {}));
    expect(err.message).toContain('answered HTTP 302');
    expect(seen).toEqual(['/start']);
  });
});
