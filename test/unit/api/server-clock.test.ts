import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/create-api-client.ts';
import { createServerClock } from '../../../src/api/server-clock.ts';

/**
 * The platform's clock as its answers' `Date` tell it: the latest `Date` plus the time
 * elapsed since on the monotonic clock, never this machine's wall clock.
 */
describe('createServerClock', () => {
  it('is unknown until a Date is seen, then runs on from it with the monotonic clock', () => {
    let mono = 1_000;
    const clock = createServerClock(() => mono);
    expect(clock.now()).toBeUndefined();
    clock.see(undefined);
    clock.see('not a date');
    expect(clock.now()).toBeUndefined();
    clock.see('Thu, 26 Nov 2026 10:00:00 GMT');
    expect(clock.now()).toBe(Date.UTC(2026, 10, 26, 10, 0, 0));
    mono += 2_500;
    expect(clock.now()).toBe(Date.UTC(2026, 10, 26, 10, 0, 2, 500));
    // An answer telling a later time than the estimate (its second began since) counts.
    mono += 600;
    clock.see('Thu, 26 Nov 2026 10:00:04 GMT');
    expect(clock.now()).toBe(Date.UTC(2026, 10, 26, 10, 0, 4));
    // One telling less (its second rounded down further) does not, for a minute.
    clock.see('Thu, 26 Nov 2026 10:00:03 GMT');
    expect(clock.now()).toBe(Date.UTC(2026, 10, 26, 10, 0, 4));
    clock.see('Thu, 26 Nov 2026 09:59:00 GMT');
    expect(clock.now()).toBe(Date.UTC(2026, 10, 26, 10, 0, 4));
    // A minute on, a platform's clock stepped back is believed.
    mono += 61_000;
    clock.see(['Thu, 26 Nov 2026 10:00:00 GMT']);
    expect(clock.now()).toBe(Date.UTC(2026, 10, 26, 10, 0, 0));
  });
});

describe('ApiClient.serverTime', () => {
  let agent: MockAgent | undefined;
  afterEach(async () => {
    await agent?.close();
  });

  it("takes the Date of the platform's answers, not of a gateway's error page", async () => {
    agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('https://platform.test');
    const behind = Date.now() - 90_000;
    pool
      .intercept({ path: '/v3/app', method: 'GET' })
      .reply(200, { success: true, data: {} }, { headers: { date: new Date(behind).toUTCString() } });
    pool
      .intercept({ path: '/v3/app', method: 'GET' })
      .reply(502, '<html>bad gateway</html>', { headers: { date: new Date().toUTCString() } });
    const client = createApiClient({
      baseUrl: 'https://platform.test',
      credentials: { kind: 'token', token: 't' },
      dispatcher: agent,
      retry: { retries: 0 },
    });
    try {
      expect(client.serverTime()).toBeUndefined();
      await client.call({ method: 'GET', path: '/v3/app', write: false });
      const seen = client.serverTime()!;
      expect(seen).toBeGreaterThanOrEqual(Math.floor(behind / 1000) * 1000);
      expect(seen).toBeLessThan(behind + 5_000);
      await expect(client.call({ method: 'GET', path: '/v3/app', write: false })).rejects.toThrow();
      expect(client.serverTime()!).toBeLessThan(behind + 5_000);
    } finally {
      await client.close();
    }
  });
});
