/**
 * Issue 27 §1: `rowbridge notify test JOB`, run as a user types it, sends one test
 * notification to each channel, prints each answer without any URL, and exits 0 only
 * when every channel answered 2xx. A local server counts the calls and verifies the
 * generic webhook's Standard Webhooks signature.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
const SECRET = `whsec_${Buffer.from('rowbridge-notify-cli-secret-32by').toString('base64')}`;
const SLACK_TOKEN = 'T000-B000-slack-path-token-0123';

async function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { ...process.env, ROWBRIDGE_LOG_LEVEL: 'warn', ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('rowbridge notify test', () => {
  let dir: string;
  let server: RecordingServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startRecordingServer();
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-notify-cli-'));
    await writeFile(
      path.join(dir, 'ledger.yaml'),
      `name: ledger
source: { type: csv, path: ./ledger.csv }
target: { worksheet: ledger, mode: upsert, key: entry }
fields: { entry: entry }
notify:
  - { type: webhook, url: "\${ALERTS_URL}", on: [failed] }
  - { type: slack, url: "\${SLACK_URL}", on: [stale] }
`,
    );
    env = {
      ROWBRIDGE_JOBS_DIR: dir,
      ROWBRIDGE_NOTIFY_SECRET: SECRET,
      ALERTS_URL: `${server.url}/alerts?sig=query-secret-value`,
      SLACK_URL: `${server.url}/services/${SLACK_TOKEN}`,
      ROWBRIDGE_NOTIFY: JSON.stringify([
        { type: 'feishu', url: `${server.url}/open-apis/bot/v2/hook/feishu-token-abc`, on: ['failed'] },
      ]),
    };
  });
  beforeEach(() => server.reset());
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends one signed test event to each channel and exits 0 when all answered 2xx', async () => {
    server.respond((req) =>
      req.path.startsWith('/open-apis') ? { body: { code: 0, msg: 'success' } } : { body: 'ok' },
    );
    const { code, stdout } = await cli(['notify', 'test', 'ledger'], env);
    expect(code).toBe(0);
    expect(server.requests.map((r) => r.path).sort()).toEqual([
      '/alerts',
      '/open-apis/bot/v2/hook/feishu-token-abc',
      `/services/${SLACK_TOKEN}`,
    ]);
    const hook = server.requests.find((r) => r.path === '/alerts')!;
    const verified = new Webhook(SECRET).verify(hook.rawBody, hook.headers as Record<string, string>);
    expect(verified).toMatchObject({ event: 'test', job: 'ledger' });
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([
      'env:0 ROWBRIDGE_NOTIFY[0] (feishu): HTTP 200',
      'job:0 notify[0] (webhook): HTTP 200',
      'job:1 notify[1] (slack): HTTP 200',
      'every channel (3) took the test notification',
    ]);
  });

  it('prints each refusal and exits 1, never showing a URL', async () => {
    server.respond((req) =>
      req.path.startsWith('/services')
        ? { status: 403, body: 'invalid_token' }
        : req.path.startsWith('/open-apis')
          ? { body: { code: 19021, msg: 'sign match fail or timestamp is not within one hour' } }
          : { body: 'ok' },
    );
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const { code, stdout, stderr } = await cli(['notify', 'test', 'ledger'], {
      ...env,
      ALERTS_URL: `http://127.0.0.1:${port}/alerts?token=query-secret-value`,
    });
    expect(code).toBe(1);
    expect(stdout).toContain(
      'env:0 ROWBRIDGE_NOTIFY[0] (feishu): feishu answered code 19021: sign match fail',
    );
    expect(stdout).toMatch(/job:0 notify\[0\] \(webhook\): no answer \(ECONNREFUSED\)/);
    expect(stdout).toContain('job:1 notify[1] (slack): answered HTTP 403');
    expect(stdout).toContain('3 of 3 channels did not take the test notification');
    for (const secret of [SLACK_TOKEN, 'feishu-token-abc', 'query-secret-value', '127.0.0.1'])
      expect(`${stdout}${stderr}`).not.toContain(secret);
  });
});
