import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

interface Envelope<T = Record<string, unknown>> {
  success: boolean;
  error_code: number;
  error_msg: string;
  data: T;
}
interface Grant {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
}

let emulator: EmulatorHandle;
let clock = Date.parse('2024-05-01T00:00:00.000Z');
let appA: { appId: string; appKey: string; sign: string };
let appB: { appId: string; appKey: string; sign: string };

async function get<T = Record<string, unknown>>(
  path: string,
  headers: Record<string, string>,
): Promise<Envelope<T>> {
  const res = await fetch(`${emulator.url}${path}`, { headers });
  expect(res.status).toBe(200);
  return (await res.json()) as Envelope<T>;
}

async function token(body: Record<string, string>, json = false): Promise<Grant & Envelope<null>> {
  const res = await fetch(emulator.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Grant & Envelope<null>;
}

const keyHeaders = (app: { appKey: string; sign: string }) => ({
  'APP-Appkey': app.appKey,
  'APP-Sign': app.sign,
});
const bearer = (t: string, appId?: string) => ({
  authorization: `Bearer ${t}`,
  ...(appId === undefined ? {} : { 'APP-Appid': appId }),
});

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'spec', now: () => clock, accessTokenTtlMs: 60_000 });
});

beforeEach(() => {
  emulator.reset();
  emulator.setOptions({ rateLimit: undefined, quota: undefined, ipAllowList: undefined });
  appA = emulator.createApp({ name: 'A' });
  appB = emulator.createApp({ name: 'B' });
});

afterAll(async () => {
  await emulator.close();
});

describe('emulator auth: app key and sign', () => {
  it('accepts its own app and answers 10101, 10102 and 10005 where they belong', async () => {
    const ok = await get('/v3/app', keyHeaders(appA));
    expect(ok.success).toBe(true);
    expect(ok.data['id']).toBe(appA.appId);
    expect((await get('/v3/app', { 'APP-Appkey': 'nope', 'APP-Sign': appA.sign })).error_code).toBe(10101);
    expect((await get('/v3/app', { 'APP-Appkey': appA.appKey, 'APP-Sign': appB.sign })).error_code).toBe(
      10102,
    );
    expect((await get('/v3/app', {})).error_code).toBe(10101);
    expect((await get('/v3/app', { ...keyHeaders(appA), 'APP-Appid': appB.appId })).error_code).toBe(10005);
  });

  it('honours another header prefix', async () => {
    const other = await startEmulator({ dialect: 'spec', headerPrefix: 'X-HAP-' });
    try {
      const app = other.createApp({ name: 'P' });
      const res = await fetch(`${other.url}/v3/app`, {
        headers: { 'X-HAP-Appkey': app.appKey, 'X-HAP-Sign': app.sign },
      });
      expect(((await res.json()) as Envelope).success).toBe(true);
      const spec = await fetch(`${other.url}/v3/app`, { headers: keyHeaders(app) });
      expect(((await spec.json()) as Envelope).error_code).toBe(10101);
    } finally {
      await other.close();
    }
  });

  it('kills the key with its app', async () => {
    const res = await fetch(`${emulator.url}/v3/app`, { method: 'DELETE', headers: keyHeaders(appA) });
    expect(((await res.json()) as Envelope).success).toBe(true);
    expect((await get('/v3/app', keyHeaders(appA))).error_code).toBe(10101);
  });
});

describe('emulator auth: personal tokens', () => {
  it('needs APP-Appid on app endpoints and is valid only for its own apps', async () => {
    const pat = emulator.createPersonalToken([appA.appId]);
    expect((await get('/v3/app', bearer(pat, appA.appId))).data['id']).toBe(appA.appId);
    expect((await get('/v3/app', bearer(pat))).error_code).toBe(10001);
    expect((await get('/v3/app', bearer(pat, appB.appId))).error_code).toBe(10005);
    expect((await get('/v3/app', bearer('pat_unknown', appA.appId))).error_code).toBe(10105);
    const me = await get('/v3/users/me', bearer(pat));
    expect(me.data['fullname']).toBe('Ada Admin');
    const apps = await get<Array<{ id: string }>>('/v3/apps/list', bearer(pat));
    expect(apps.data.map((a) => a.id)).toEqual([appA.appId]);
  });

  it('may use an app it creates', async () => {
    const pat = emulator.createPersonalToken([appA.appId]);
    const res = await fetch(`${emulator.url}/v3/apps`, {
      method: 'POST',
      headers: { ...bearer(pat), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'New' }),
    });
    const created = (await res.json()) as Envelope<{ id: string }>;
    expect((await get('/v3/app', bearer(pat, created.data.id))).data['name']).toBe('New');
  });
});

describe('emulator auth: OAuth', () => {
  it('grants access tokens with the refresh-token grant and rotates the refresh token', async () => {
    const client = emulator.createOAuthClient([appA.appId]);
    const grant = await token({
      grant_type: 'refresh_token',
      refresh_token: client.refreshToken,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(grant).toMatchObject({ token_type: 'Bearer', expires_in: 60 });
    expect((await get('/v3/app', bearer(grant.access_token, appA.appId))).success).toBe(true);
    expect((await get('/v3/app', bearer(grant.access_token, appB.appId))).error_code).toBe(10005);

    const reused = await token({
      grant_type: 'refresh_token',
      refresh_token: client.refreshToken,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(reused.error_code).toBe(600102);
    const next = await token(
      {
        grant_type: 'refresh_token',
        refresh_token: grant.refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
      true,
    );
    expect(next.access_token).toMatch(/^oat_/);
  });

  it('answers 600112, 600000 and 600102 for bad token requests', async () => {
    const client = emulator.createOAuthClient([appA.appId]);
    const base = {
      grant_type: 'refresh_token',
      refresh_token: client.refreshToken,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    };
    const wrongSecret = await token({ ...base, client_secret: 'wrong-secret' });
    expect(wrongSecret.error_code).toBe(600112);
    expect(wrongSecret.error_msg).not.toContain('wrong-secret');
    expect((await token({ ...base, grant_type: 'password' })).error_code).toBe(600000);
    expect(
      (
        await token({
          grant_type: 'refresh_token',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        })
      ).error_code,
    ).toBe(600000);
    expect((await token({ ...base, refresh_token: 'ort_forged' })).error_code).toBe(600102);
  });

  it('expires access tokens (600100) after their lifetime', async () => {
    const client = emulator.createOAuthClient([appA.appId]);
    const grant = await token({
      grant_type: 'refresh_token',
      refresh_token: client.refreshToken,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    clock += 59_000;
    expect((await get('/v3/app', bearer(grant.access_token, appA.appId))).success).toBe(true);
    clock += 1_000;
    expect((await get('/v3/app', bearer(grant.access_token, appA.appId))).error_code).toBe(600100);
    expect((await get('/v3/app', bearer('oat_forged', appA.appId))).error_code).toBe(600100);

    const fresh = await token({
      grant_type: 'refresh_token',
      refresh_token: grant.refresh_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect((await get('/v3/app', bearer(fresh.access_token, appA.appId))).success).toBe(true);
    emulator.expireAccessTokens();
    expect((await get('/v3/app', bearer(fresh.access_token, appA.appId))).error_code).toBe(600100);
  });
});

describe('emulator limits', () => {
  it('refuses clients outside the IP allow-list with 10000 (600113 at the token endpoint)', async () => {
    emulator.setOptions({ ipAllowList: ['10.9.9.9'] });
    expect((await get('/v3/app', keyHeaders(appA))).error_code).toBe(10000);
    const client = emulator.createOAuthClient([appA.appId]);
    const refused = await token({
      grant_type: 'refresh_token',
      refresh_token: client.refreshToken,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(refused.error_code).toBe(600113);
    emulator.setOptions({ ipAllowList: ['127.0.0.1'] });
    expect((await get('/v3/app', keyHeaders(appA))).success).toBe(true);
  });

  it('throttles each credential with a token bucket (51)', async () => {
    emulator.setOptions({ rateLimit: { requestsPerSecond: 1, burst: 2 } });
    const codes = [];
    for (let i = 0; i < 3; i += 1) codes.push((await get('/v3/app', keyHeaders(appA))).error_code);
    expect(codes).toEqual([1, 1, 51]);
    expect((await get('/v3/app', keyHeaders(appB))).error_code).toBe(1);
    clock += 1_000;
    expect((await get('/v3/app', keyHeaders(appA))).error_code).toBe(1);
    expect((await get('/v3/app', keyHeaders(appA))).error_code).toBe(51);
  });

  it('counts requests per window (90000)', async () => {
    emulator.setOptions({ quota: { requests: 3, windowMs: 60_000 } });
    const codes = [];
    for (let i = 0; i < 4; i += 1) codes.push((await get('/v3/app', keyHeaders(appA))).error_code);
    expect(codes).toEqual([1, 1, 1, 90000]);
    clock += 60_000;
    expect((await get('/v3/app', keyHeaders(appA))).error_code).toBe(1);
  });

  it('logs requests with credential ids, never secrets', async () => {
    const pat = emulator.createPersonalToken([appA.appId]);
    await get('/v3/app', keyHeaders(appA));
    await get('/v3/app', bearer(pat, appA.appId));
    await get('/v3/app', { 'APP-Appkey': appA.appKey, 'APP-Sign': 'bad' });
    expect(emulator.requests.map((r) => [r.path, r.errorCode, r.credentialId])).toEqual([
      ['/v3/app', 1, `appkey:${appA.appId}`],
      ['/v3/app', 1, expect.stringMatching(/^pat:[0-9a-f]{24}$/)],
      ['/v3/app', 10102, undefined],
    ]);
    const logged = JSON.stringify(emulator.requests);
    expect(logged).not.toContain(appA.sign);
    expect(logged).not.toContain(pat);
  });

  it('keeps only the latest requestLogLimit entries', async () => {
    emulator.setOptions({ requestLogLimit: 10 });
    try {
      for (let i = 0; i < 11; i += 1) await get(`/v3/app?n=${i}`, keyHeaders(appA));
      await get('/v3/users/me', keyHeaders(appA));
      expect(emulator.requests.length).toBeLessThanOrEqual(10);
      expect(emulator.requests.at(-1)!.path).toBe('/v3/users/me');
    } finally {
      emulator.setOptions({ requestLogLimit: 100_000 });
    }
  });
});
