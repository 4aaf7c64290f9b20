/**
 * Attack (on availability): two deployments with different queue prefixes share one
 * OAuth credential. With the token store keyed by prefix and app id, the second kept
 * the refresh token the platform had already rotated for the first and failed with
 * 600102 for good. Keyed by token URL and client id, both follow one chain.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/settings.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { oauthTokenKey } from '../../src/api/oauth-token-store.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

describe('two deployments sharing one OAuth credential', () => {
  let emulator: EmulatorHandle;
  let redis: Redis;
  let appId: string;
  let oauth: { clientId: string; clientSecret: string; refreshToken: string };
  const runtimes: Runtime[] = [];

  beforeAll(async () => {
    // Longer than the client's refresh margin (60 s): a token that young is used, not renewed.
    emulator = await startEmulator({ accessTokenTtlMs: 600_000 });
    appId = emulator.createApp({ name: 'shared' }).appId;
    oauth = emulator.createOAuthClient([appId]);
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    for (const rt of runtimes) await rt.close();
    const key = oauthTokenKey(emulator.tokenUrl, oauth.clientId);
    await redis.del(key, `${key}:lock`);
    // Each deployment's rate budget lives under its queue prefix.
    for (const side of ['a', 'b']) await deleteKeys(`rbtest-sec-oauth-${side}-${process.pid}:*`);
    redis.disconnect();
    await emulator.close();
  });

  /**
   * A deployment as rowbridge builds it: its own runtime under its own queue prefix,
   * the credential from its environment.
   */
  function deployment(queuePrefix: string): PlatformClient {
    const env = {
      REDIS_URL,
      ROWBRIDGE_QUEUE_PREFIX: queuePrefix,
      ROWBRIDGE_API_URL: emulator.url,
      ROWBRIDGE_HEADER_PREFIX: emulator.headerPrefix,
      ROWBRIDGE_OAUTH_TOKEN_URL: emulator.tokenUrl,
      ROWBRIDGE_OAUTH_CLIENT_ID: oauth.clientId,
      ROWBRIDGE_OAUTH_CLIENT_SECRET: oauth.clientSecret,
      ROWBRIDGE_OAUTH_REFRESH_TOKEN: oauth.refreshToken,
      ROWBRIDGE_APPID: appId,
      ROWBRIDGE_RETRIES: '1',
    };
    const rt = createRuntime({ settings: loadSettings(env), env, logger: createLogger({ level: 'silent' }) });
    runtimes.push(rt);
    return rt.clientFor();
  }

  it('keeps working in both after the refresh token rotates, each refresh once', async () => {
    const a = deployment(`rbtest-sec-oauth-a-${process.pid}`);
    const b = deployment(`rbtest-sec-oauth-b-${process.pid}`);
    const get = { method: 'GET', path: '/v3/app', write: false } as const;
    const tokenPath = new URL(emulator.tokenUrl).pathname;
    /** Token requests the platform has answered so far, and whether each gave a token. */
    const refreshes = () => {
      const asked = emulator.requests.filter((r) => r.path === tokenPath);
      return { asked: asked.length, refused: asked.filter((r) => r.httpStatus !== 200).length };
    };
    await a.call(get);
    expect(refreshes()).toEqual({ asked: 1, refused: 0 });
    // b starts with the env's refresh token, which a's refresh has revoked: it takes a's.
    await b.call(get);
    expect(refreshes()).toEqual({ asked: 1, refused: 0 });
    emulator.expireAccessTokens();
    await b.call(get);
    await a.call(get);
    // One expiry, one refresh: a takes the token b's refresh stored.
    expect(refreshes()).toEqual({ asked: 2, refused: 0 });
    emulator.expireAccessTokens();
    await a.call(get);
    await b.call(get);
    expect(refreshes()).toEqual({ asked: 3, refused: 0 });
    // Every API call was answered with data: none failed and none was sent twice.
    const calls = emulator.requests.filter((r) => r.path === '/v3/app');
    expect(calls.filter((r) => r.errorCode === 1)).toHaveLength(6);
  });

  it('names the chain by token URL and client id only', () => {
    const key = oauthTokenKey(emulator.tokenUrl, oauth.clientId);
    expect(key).toBe(oauthTokenKey(emulator.tokenUrl, oauth.clientId));
    expect(key).not.toBe(oauthTokenKey(`${emulator.url}/other/token`, oauth.clientId));
    expect(key).not.toContain(oauth.clientId);
    expect(key).not.toContain('rbtest');
  });
});
