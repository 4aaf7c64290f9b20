import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/create-api-client.ts';
import { ApiError, ConfigError } from '../../src/ground/errors.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import { createRedisTokenStore, oauthTokenKey } from '../../src/api/oauth-token-store.ts';
import { Redis } from 'ioredis';

/**
 * A token endpoint and one API endpoint on a real HTTP server: the API answers 600100
 * to any token but the latest one issued, as the platform does once a token expires.
 */
interface OAuthServer {
  url: string;
  grants: number;
  current: string;
  apiCalls: number;
  rejectClient: boolean;
  rejectIp: boolean;
  /** A refresh token works once: rotation revokes it (OAuth 2.1 practice). */
  revokeUsed: boolean;
  usedRefreshTokens: Set<string>;
  rotate: boolean;
  seenRefreshTokens: string[];
  lastAppId: string | undefined;
  server: Server;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => resolve(data));
  });
}

async function startOAuthServer(): Promise<OAuthServer> {
  const state: Omit<OAuthServer, 'url' | 'server'> = {
    grants: 0,
    current: 'initial-expired',
    apiCalls: 0,
    rejectClient: false,
    rejectIp: false,
    revokeUsed: false,
    usedRefreshTokens: new Set<string>(),
    rotate: false,
    seenRefreshTokens: [],
    lastAppId: undefined,
  };
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/oauth2/token') {
        const form = new URLSearchParams(body);
        state.seenRefreshTokens.push(form.get('refresh_token') ?? '');
        if (state.rejectIp) {
          res.end(
            JSON.stringify({
              success: false,
              error_code: 600113,
              error_msg: 'client IP not on the allow-list',
            }),
          );
          return;
        }
        const presented = form.get('refresh_token') ?? '';
        if (state.revokeUsed && state.usedRefreshTokens.has(presented)) {
          res.end(JSON.stringify({ success: false, error_code: 600102, error_msg: 'refresh token revoked' }));
          return;
        }
        state.usedRefreshTokens.add(presented);
        if (state.rejectClient || form.get('client_secret') !== 'client-secret-value') {
          res.end(
            JSON.stringify({
              success: false,
              error_code: 600112,
              error_msg: 'client_id or client_secret wrong',
            }),
          );
          return;
        }
        // Answer slowly so that concurrent requests pile up behind the refresh.
        await new Promise((r) => setTimeout(r, 50));
        state.grants += 1;
        state.current = `access-${state.grants}`;
        res.end(
          JSON.stringify({
            access_token: state.current,
            token_type: 'Bearer',
            expires_in: 3600,
            ...(state.rotate ? { refresh_token: `refresh-${state.grants}` } : {}),
          }),
        );
        return;
      }
      state.apiCalls += 1;
      state.lastAppId = req.headers['hap-appid'] as string | undefined;
      if (req.headers.authorization !== `Bearer ${state.current}`) {
        res.end(JSON.stringify({ success: false, error_code: 600100, error_msg: 'access token expired' }));
        return;
      }
      res.end(JSON.stringify({ success: true, error_code: 1, error_msg: '', data: { ok: true } }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, { url, server });
}

describe('OAuth refresh', () => {
  let srv: OAuthServer;
  beforeAll(async () => {
    srv = await startOAuthServer();
  });
  afterAll(async () => {
    await new Promise((r) => srv.server.close(r));
  });
  beforeEach(() => {
    srv.grants = 0;
    srv.current = 'initial-expired';
    srv.apiCalls = 0;
    srv.rejectClient = false;
    srv.rejectIp = false;
    srv.revokeUsed = false;
    srv.usedRefreshTokens = new Set();
    srv.rotate = false;
    srv.seenRefreshTokens = [];
  });

  function client(accessToken?: string) {
    return createApiClient({
      baseUrl: srv.url,
      credentials: {
        kind: 'oauth',
        tokenUrl: `${srv.url}/oauth2/token`,
        clientId: 'client-id',
        clientSecret: 'client-secret-value',
        refreshToken: 'refresh-0',
        appId: 'app-1',
        ...(accessToken === undefined ? {} : { accessToken, expiresAt: Date.now() + 3_600_000 }),
      },
      retry: { retries: 2, baseDelayMs: 1 },
      limiter: createRateLimiter({
        budgetKey: `test:auth:${Math.random()}`,
        initialRatePerSec: 1000,
        maxRatePerSec: 1000,
      }),
    });
  }

  it('refreshes exactly once for 50 concurrent requests that meet an expired token', async () => {
    // The client believes its token is valid for an hour; the server has expired it.
    const api = client('initial-expired-but-client-does-not-know');
    srv.current = 'something-else';
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        api.call<{ ok: boolean }>({ method: 'GET', path: '/v3/app', write: false }),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(srv.grants).toBe(1);
    expect(api.auth.refreshCount).toBe(1);
    expect(srv.lastAppId).toBe('app-1');
    await api.close();
  });

  it('fetches a token before the first request when it has none, once for concurrent callers', async () => {
    const api = client();
    await Promise.all(
      Array.from({ length: 20 }, () => api.call({ method: 'GET', path: '/v3/app', write: false })),
    );
    expect(srv.grants).toBe(1);
    expect(srv.apiCalls).toBe(20);
    await api.close();
  });

  it('keeps a rotated refresh token for the next grant', async () => {
    srv.rotate = true;
    const api = client('stale');
    await api.call({ method: 'GET', path: '/v3/app', write: false });
    srv.current = 'expired-again';
    await api.call({ method: 'GET', path: '/v3/app', write: false });
    expect(srv.seenRefreshTokens).toEqual(['refresh-0', 'refresh-1']);
    await api.close();
  });

  it('surfaces bad client credentials (600112) as a configuration error without the secret', async () => {
    srv.rejectClient = true;
    const api = client();
    const err = await api.call({ method: 'GET', path: '/v3/app', write: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/600112.*ROWBRIDGE_OAUTH_CLIENT_SECRET/);
    expect((err as Error).message).not.toContain('client-secret-value');
    expect(srv.apiCalls).toBe(0);
    await api.close();
  });

  it('surfaces an IP refused by the token endpoint (600113) as a configuration error', async () => {
    srv.rejectIp = true;
    const api = client();
    const err = await api.call({ method: 'GET', path: '/v3/app', write: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/600113.*allow-list/);
    await api.close();
  });

  it('turns 600100 for a credential that cannot refresh into an auth error', async () => {
    const api = createApiClient({
      baseUrl: srv.url,
      credentials: { kind: 'token', token: 'personal-token-secret', appId: 'app-1' },
      retry: { retries: 2, baseDelayMs: 1 },
    });
    const err = await api.call({ method: 'GET', path: '/v3/app', write: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).category).toBe('auth');
    expect((err as Error).message).not.toContain('personal-token-secret');
    expect(srv.apiCalls).toBe(1);
    await api.close();
  });

  it('two processes sharing one credential refresh once and pass on rotated refresh tokens (through Redis, encrypted)', async () => {
    srv.rotate = true;
    srv.revokeUsed = true;
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const key = oauthTokenKey(`${srv.url}/oauth2/token`, 'client-id');
    const store = () =>
      createRedisTokenStore({
        redis,
        tokenUrl: `${srv.url}/oauth2/token`,
        clientId: 'client-id',
        clientSecret: 'client-secret-value',
      });
    const make = () =>
      createApiClient({
        baseUrl: srv.url,
        credentials: {
          kind: 'oauth',
          tokenUrl: `${srv.url}/oauth2/token`,
          clientId: 'client-id',
          clientSecret: 'client-secret-value',
          refreshToken: 'refresh-0',
          appId: 'app-1',
        },
        retry: { retries: 2, baseDelayMs: 1 },
        limiter: createRateLimiter({
          budgetKey: `test:auth:${Math.random()}`,
          initialRatePerSec: 1000,
          maxRatePerSec: 1000,
        }),
        tokenStore: store(),
      });
    const a = make();
    const b = make();
    try {
      await a.call({ method: 'GET', path: '/v3/app', write: false });
      await b.call({ method: 'GET', path: '/v3/app', write: false });
      expect(srv.grants).toBe(1);
      // The server expires the token: both processes meet 600100 at once.
      srv.current = 'expired';
      const get = { method: 'GET', path: '/v3/app', write: false } as const;
      await Promise.all([
        ...Array.from({ length: 10 }, () => a.call(get)),
        ...Array.from({ length: 10 }, () => b.call(get)),
      ]);
      expect(srv.grants).toBe(2);
      // Without the shared store the second process would present the revoked refresh-0.
      expect(srv.seenRefreshTokens).toEqual(['refresh-0', 'refresh-1']);
      const sealed = (await redis.get(key)) ?? '';
      expect(sealed).not.toBe('');
      for (const secret of [srv.current, 'refresh-2', 'client-secret-value'])
        expect(sealed).not.toContain(secret);
    } finally {
      await a.close();
      await b.close();
      await redis.del(key, `${key}:lock`);
      redis.disconnect();
    }
  });
});
