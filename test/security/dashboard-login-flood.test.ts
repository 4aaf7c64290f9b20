/**
 * Attack: a flood of wrong basic-auth logins. Each wrong password used to cost one scrypt
 * (16 MiB, tens of ms on libuv's four threads) with no limit, even with only a token
 * configured: the flood stalled the dashboard, the worker serving it, and allowed
 * unbounded guessing. Now: no scrypt without users, at most two verifications at once
 * (429 beyond), and a client address over its failure budget gets 429 with Retry-After,
 * even with the right password, until its backoff ends. Latency figures: bench/login-flood.ts.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { hashPassword } from '../../src/ops/dashboard/password-hash.ts';
import type * as PasswordHash from '../../src/ops/dashboard/password-hash.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import type { RawResponse } from './raw-request.ts';

/** Every scrypt verification the dashboard starts, and how many ran at once at most. */
const scrypts = vi.hoisted(() => ({ started: 0, running: 0, maxRunning: 0 }));

vi.mock('../../src/ops/dashboard/password-hash.ts', async (importOriginal) => {
  const original = await importOriginal<typeof PasswordHash>();
  return {
    ...original,
    async verifyPassword(password: string, encoded: string): Promise<boolean> {
      scrypts.started += 1;
      scrypts.running += 1;
      scrypts.maxRunning = Math.max(scrypts.maxRunning, scrypts.running);
      try {
        return await original.verifyPassword(password, encoded);
      } finally {
        scrypts.running -= 1;
      }
    },
  };
});

const TOKEN = 'login-flood-dashboard-token-0123';
const PASSWORD = 'correct horse battery';

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** A GET from a chosen loopback source address (Linux routes all of 127/8 to lo). */
function get(url: string, from: string, authorization?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    const req = request(url, { localAddress: from, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a flood of wrong dashboard logins', () => {
  let h: Harness;
  let metrics: Metrics;
  const servers: OpsServer[] = [];

  async function serve(access: Parameters<typeof startOpsServer>[0]['access']): Promise<string> {
    const server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
      ...(access === undefined ? {} : { access }),
    });
    servers.push(server);
    return server.url;
  }

  beforeAll(async () => {
    h = await createHarness('sec-login-flood');
    metrics = createMetrics(undefined, { defaultMetrics: false });
  }, 60_000);

  afterAll(async () => {
    for (const server of servers) await server.close();
    await metrics?.close();
    await h?.close();
  });

  beforeEach(() => {
    scrypts.started = 0;
    scrypts.maxRunning = 0;
  });

  it('runs no scrypt at all when only a token is configured', async () => {
    const url = await serve({ token: TOKEN });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => get(`${url}/jobs`, '127.0.0.1', basic(`u${i}`, `guess-${i}`))),
    );
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    expect(scrypts.started).toBe(0);
    // The token as the basic password still logs in, from an address that guessed nothing.
    expect((await get(`${url}/jobs`, '127.0.0.2', basic('any', TOKEN))).status).toBe(200);
  });

  it('verifies at most two passwords at once and answers 429 with Retry-After beyond', async () => {
    // A large failure budget, so only the concurrency limit can refuse.
    const url = await serve({
      token: TOKEN,
      users: `alice:${hashPassword(PASSWORD)}`,
      logins: { failureBudget: 1000 },
    });
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => get(`${url}/jobs`, '127.0.0.1', basic('alice', `wrong-${i}`))),
    );
    expect(scrypts.maxRunning).toBeLessThanOrEqual(2);
    const busy = answers.filter((a) => a.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 401)).toBe(true);
    for (const a of busy) expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('locks an address out after its failure budget, even for the right password, until the backoff ends', async () => {
    const url = await serve({
      token: TOKEN,
      users: `alice:${hashPassword(PASSWORD)}`,
      logins: { failureBudget: 3, backoffMs: 1000 },
    });
    const from = '127.0.0.3';
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await get(`${url}/jobs`, from, basic('alice', `wrong-${i}`))).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    const verified = scrypts.started;
    expect(verified).toBe(3);

    const locked = await get(`${url}/jobs`, from, basic('alice', PASSWORD));
    expect(locked.status).toBe(429);
    const retryAfter = Number(locked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(locked.body).not.toContain(PASSWORD);
    // Refused before any verification: the lock-out costs the server nothing.
    expect(scrypts.started).toBe(verified);
    // Another address is not locked out by this one's failures.
    expect((await get(`${url}/jobs`, '127.0.0.4', basic('alice', PASSWORD))).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    expect((await get(`${url}/jobs`, from, basic('alice', PASSWORD))).status).toBe(200);
  });

  it('keeps serving a bearer client while another address floods wrong logins', async () => {
    const url = await serve({ token: TOKEN, users: `alice:${hashPassword(PASSWORD)}` });
    let flooding = true;
    const floodStatuses: number[] = [];
    const flood = Array.from({ length: 16 }, async (_, lane) => {
      for (let i = 0; flooding; i++) {
        floodStatuses.push((await get(`${url}/jobs`, '127.0.0.5', basic('alice', `w-${lane}-${i}`))).status);
      }
    });
    try {
      for (let i = 0; i < 10; i++) {
        const res = await get(`${url}/jobs`, '127.0.0.6', `Bearer ${TOKEN}`);
        expect(res.status).toBe(200);
      }
    } finally {
      flooding = false;
      await Promise.all(flood);
    }
    expect(floodStatuses).not.toContain(200);
    expect(floodStatuses).toContain(429);
    // The flood's address is locked out, so only its first few guesses were verified.
    expect(scrypts.started).toBeLessThan(floodStatuses.length / 4);
  });
});
