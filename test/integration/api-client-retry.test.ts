import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/create-api-client.ts';
import type { ApiClient } from '../../src/api/create-api-client.ts';
import { ApiError } from '../../src/ground/errors.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';

/**
 * A real server that plays a script of answers, one per request: an error code, an
 * HTTP status, or `drop` (read the request, then destroy the socket without answering).
 */
type Step = { code: number } | { status: number } | 'drop' | 'ok';

describe('client retry policy per category', () => {
  let server: Server;
  let url: string;
  let script: Step[] = [];
  let received = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received += 1;
        const step = script.shift() ?? 'ok';
        if (step === 'drop') {
          res.socket?.destroy();
          return;
        }
        res.setHeader('content-type', 'application/json');
        if (step === 'ok') {
          res.end(JSON.stringify({ success: true, error_code: 1, error_msg: '', data: { n: received } }));
        } else if ('status' in step) {
          res.statusCode = step.status;
          res.end('upstream trouble');
        } else {
          res.end(JSON.stringify({ success: false, error_code: step.code, error_msg: `code ${step.code}` }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    script = [];
    received = 0;
  });

  function client(retries = 3): ApiClient {
    return createApiClient({
      baseUrl: url,
      credentials: { kind: 'appkey', appKey: 'key-1', sign: 'sign-secret' },
      retry: { retries, baseDelayMs: 1, maxDelayMs: 5 },
      limiter: createRateLimiter({
        budgetKey: 'test:retry',
        initialRatePerSec: 1000,
        maxRatePerSec: 1000,
        backoff51Ms: 5,
        backoff90000Ms: 5,
      }),
    });
  }

  const write = {
    method: 'POST',
    path: '/v3/app/worksheets/w/rows/batch',
    body: { rows: [] },
    write: true,
  } as const;
  const read = {
    method: 'POST',
    path: '/v3/app/worksheets/w/rows/list',
    body: { pageSize: 1, pageIndex: 1 },
    write: false,
  } as const;

  it('retries throttled answers (51, 90000, 429) without charging an attempt', async () => {
    const api = client(1);
    script = [{ code: 51 }, { code: 90000 }, { status: 429 }, { code: 51 }];
    await expect(api.call(write)).resolves.toEqual({ n: 5 });
    expect(api.stats.throttled).toBe(4);
    await api.close();
  });

  it('retries transient failures (99999, 5xx) with backoff and gives up after the attempts', async () => {
    const api = client(2);
    script = [{ code: 99999 }, { status: 503 }];
    await expect(api.call(write)).resolves.toEqual({ n: 3 });
    script = [{ code: 99999 }, { code: 99999 }, { code: 99999 }, 'ok'];
    received = 0;
    const err = await api.call(write).catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'transient', errorCode: 99999 });
    expect(received).toBe(3);
    await api.close();
  });

  it('never retries a write whose connection was lost after sending (ambiguous)', async () => {
    const api = client(3);
    script = ['drop'];
    const err = await api.call(write).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).category).toBe('ambiguous');
    expect(received).toBe(1);
    await api.close();
  });

  it('retries a read whose connection was lost', async () => {
    const api = client(3);
    script = ['drop'];
    await expect(api.call(read)).resolves.toEqual({ n: 2 });
    await api.close();
  });

  it.each([10002, 430019, 100005, 10101, 10005, 430022, 430017, 600300])(
    'fails at once on %i',
    async (code) => {
      const api = client(3);
      script = [{ code }];
      const err = await api.call(write).catch((e: unknown) => e);
      expect(err).toMatchObject({ errorCode: code });
      expect(received).toBe(1);
      await api.close();
    },
  );

  it('retries an unknown code a little, then fails with it', async () => {
    const api = client(6);
    script = [{ code: 777 }, { code: 777 }, { code: 777 }, 'ok'];
    const err = await api.call(write).catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'unknown', errorCode: 777 });
    expect(received).toBe(3);
    await api.close();
  });

  it('reports a refused connection as transient, with method and path but no credentials', async () => {
    const api = createApiClient({
      baseUrl: 'http://127.0.0.1:1',
      credentials: { kind: 'appkey', appKey: 'key-1', sign: 'sign-secret' },
      retry: { retries: 1, baseDelayMs: 1 },
      limiter: createRateLimiter({ budgetKey: 'test:refused', initialRatePerSec: 1000, maxRatePerSec: 1000 }),
    });
    const err = await api.call(write).catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'transient', method: 'POST', path: write.path });
    expect(JSON.stringify(err) + String(err)).not.toContain('sign-secret');
    await api.close();
  });
});
