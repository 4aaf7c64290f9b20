/**
 * Attack (on availability): two deployments with different queue prefixes share one
 * OAuth credential. With the token store keyed by prefix and app id, the second kept
 * the refresh token the platform had already rotated for the first and failed with
 * 600102 for good. Keyed by token URL and client id, both follow one chain.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/create-api-client.ts';
import type { ApiClient } from '../../src/api/create-api-client.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import { createRedisTokenStore, oauthTokenKey } from '../../src/api/oauth-token-store.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import { REDIS_URL } from '../helpers/sync-harness.ts';

describe('two deployments sharing one OAuth credential', () => {
  let emulator: EmulatorHandle;
  let redis: Redis;
  let appId: string;
  let oauth: { clientId: string; clientSecret: string; refreshToken: string };
  const clients: ApiClient[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({ accessTokenTtlMs: 60_000 });
    appId = emulator.createApp({ name: 'shared' }).appId;
    oauth = emulator.createOAuthClient([appId]);
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    const key = oauthTokenKey(emulator.tokenUrl, oauth.clientId);
    await redis.del(key, `${key}:lock`);
    redis.disconnect();
    await emulator.close();
  });

  /** A deployment as its runtime builds it: its own queue prefix, the credential from its env. */
  function deployment(queuePrefix: string): ApiClient {
    const credentials = {
      kind: 'oauth',
      tokenUrl: emulator.tokenUrl,
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      refreshToken: oauth.refreshToken,
      appId,
    } as const;
    const client = createApiClient({
      baseUrl: emulator.url,
      credentials,
      headerPrefix: (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-',
      retry: { retries: 1, baseDelayMs: 1 },
      limiter: createRateLimiter({
        budgetKey: `${queuePrefix}:budget:${Math.random()}`,
        initialRatePerSec: 1000,
        maxRatePerSec: 1000,
      }),
      tokenStore: createRedisTokenStore({
        redis,
        tokenUrl: credentials.tokenUrl,
        clientId: credentials.clientId,
        clientSecret: credentials.clientSecret,
      }),
    });
    clients.push(client);
    return client;
  }

  it('keeps working in both after the refresh token rotates, each refresh once', async () => {
    const a = deployment('rbtest-sec-oauth-a');
    const b = deployment('rbtest-sec-oauth-b');
    const get = { method: 'GET', path: '/v3/app', write: false } as const;
    await a.call(get);
    // b starts with the env's refresh token, which a's refresh has revoked.
    await b.call(get);
    emulator.expireAccessTokens();
    await b.call(get);
    await a.call(get);
    emulator.expireAccessTokens();
    await a.call(get);
    await b.call(get);
  });

  it('names the chain by token URL and client id only', () => {
    const key = oauthTokenKey(emulator.tokenUrl, oauth.clientId);
    expect(key).toBe(oauthTokenKey(emulator.tokenUrl, oauth.clientId));
    expect(key).not.toBe(oauthTokenKey(`${emulator.url}/other/token`, oauth.clientId));
    expect(key).not.toContain(oauth.clientId);
    expect(key).not.toContain('rbtest');
  });
});
