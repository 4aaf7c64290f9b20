/**
 * Attack: a dashboard bound beyond loopback without a login shows every run, dead
 * letter and queued row to the network. It must refuse to start without a token or
 * users (exit 64), and with one it must answer 401 to requests without it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/dashboard.ts';
import type { CliIo } from '../../src/cli/io.ts';
import { hashPassword } from '../../src/ops/dashboard/password-hash.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from './raw-request.ts';

const TOKEN = 'test-dashboard-token-0123456789';

function captureIo(env: NodeJS.ProcessEnv): CliIo & { errText(): string } {
  let err = '';
  return {
    out: () => undefined,
    err: (text) => (err += text),
    isTty: false,
    env: { ...env, ROWBRIDGE_LOG_LEVEL: 'silent' },
    cwd: process.cwd(),
    errText: () => err,
  };
}

describe('a dashboard off loopback needs a login', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let base: string;

  beforeAll(async () => {
    h = await createHarness('sec-auth');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      host: '0.0.0.0',
      dashboard: true,
      access: { token: TOKEN, users: `alice:${hashPassword('correct horse battery')}` },
    });
    base = `http://127.0.0.1:${new URL(server.url).port}`;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  it('answers 401 with a basic-auth challenge without credentials, or with wrong ones', async () => {
    for (const path of ['/', '/dead-letters', '/queues', '/queues/api/queues']) {
      const res = await rawRequest(`${base}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    }
    const wrong = await rawRequest(`${base}/`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const basic = Buffer.from('alice:wrong password').toString('base64');
    expect((await rawRequest(`${base}/`, { headers: { authorization: `Basic ${basic}` } })).status).toBe(401);
  });

  it('serves the pages with the bearer token, the token as a basic password, or a user', async () => {
    // `/` redirects to /runs since issue 23 §5; the redirect and the page both need the login.
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const root = await rawRequest(`${base}/`, { headers: bearer });
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/runs');
    expect((await rawRequest(`${base}/runs`, { headers: bearer })).status).toBe(200);
    const asPassword = Buffer.from(`any:${TOKEN}`).toString('base64');
    expect(
      (await rawRequest(`${base}/queues/api/queues`, { headers: { authorization: `Basic ${asPassword}` } }))
        .status,
    ).toBe(200);
    const alice = Buffer.from('alice:correct horse battery').toString('base64');
    expect(
      (await rawRequest(`${base}/dead-letters`, { headers: { authorization: `Basic ${alice}` } })).status,
    ).toBe(200);
  });

  it('keeps the probes open without credentials', async () => {
    expect((await rawRequest(`${base}/metrics`)).status).toBe(200);
    expect((await rawRequest(`${base}/readyz`)).status).not.toBe(401);
  });

  it('refuses to start on 0.0.0.0 without a token or users: exit 64 and a message naming the settings', async () => {
    const io = captureIo(h.env);
    const code = await main(['--host', '0.0.0.0', '--port', '0'], io);
    expect(code).toBe(64);
    expect(io.errText()).toContain('ROWBRIDGE_DASHBOARD_TOKEN');
    expect(io.errText()).toContain('ROWBRIDGE_DASHBOARD_USERS');
  });

  it("guards a worker's --dashboard the same way: no start on 0.0.0.0 without a login, the probes alone may", async () => {
    const options = { rt: h.rt, metrics, readiness: createReadiness(), port: 0, host: '0.0.0.0', access: {} };
    await expect(startOpsServer({ ...options, dashboard: true })).rejects.toThrow(
      /ROWBRIDGE_DASHBOARD_TOKEN/,
    );
    const probes = await startOpsServer({ ...options, dashboard: false });
    expect((await rawRequest(`http://127.0.0.1:${new URL(probes.url).port}/metrics`)).status).toBe(200);
    await probes.close();
  });

  it('refuses a short token without echoing it', async () => {
    const io = captureIo({ ...h.env, ROWBRIDGE_DASHBOARD_TOKEN: 'short-s3cret' });
    const code = await main(['--host', '0.0.0.0', '--port', '0'], io);
    expect(code).toBe(64);
    expect(io.errText()).toContain('at least 16 characters');
    expect(io.errText()).not.toContain('short-s3cret');
  });
});

describe('rowbridge dashboard --hash-password', () => {
  it('hashes the password read from stdin into a ROWBRIDGE_DASHBOARD_USERS entry that verifies', async () => {
    const { spawnSync } = await import('node:child_process');
    const { verifyPassword } = await import('../../src/ops/dashboard/password-hash.ts');
    const result = spawnSync(process.execPath, ['src/cli.ts', 'dashboard', '--hash-password'], {
      input: 'correct horse battery\n',
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    expect(result.status).toBe(0);
    const hash = result.stdout.trim();
    expect(hash).toMatch(/^scrypt\$[\w-]+\$[\w-]+$/);
    expect(result.stdout).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
  });
});
