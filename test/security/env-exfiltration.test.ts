/**
 * Attack: a job spec's `${ENV}` named any variable, ROWBRIDGE_SIGN and REDIS_URL
 * included, and an http source sent it to any host. Those names (and anything named
 * like a secret) must be refused before a request leaves, unless allowed by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { HttpSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

const env = {
  ROWBRIDGE_SIGN: 'platform-sign-secret',
  REDIS_URL: 'redis://:redis-pass@cache:6379',
  CRM_API_TOKEN: 'crm-token',
  PUBLIC_REGION: 'eu',
};

describe('${ENV} in job specs', () => {
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
        { env: { ...env, ...extra }, baseDir: '/' },
      ),
    );

  it('refuses ${ROWBRIDGE_SIGN} in a header before any request, naming the field and the setting', async () => {
    const err = await rejection(read({ headers: { 'X-Leak': '${ROWBRIDGE_SIGN}' } }));
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toContain('source.headers.X-Leak');
    expect(err.message).toContain('ROWBRIDGE_SOURCE_ENV_ALLOW');
    expect(err.message).not.toContain(env.ROWBRIDGE_SIGN);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses REDIS_URL in the url or the query, and *_TOKEN unless listed by name (a glob does not unlock it)', async () => {
    expect((await rejection(read({ url: `${server.url}/items?r=\${REDIS_URL}` }))).message).toContain(
      'source.url',
    );
    expect((await rejection(read({ query: { t: '${CRM_API_TOKEN}' } }))).message).toContain('source.query.t');
    expect(
      (await rejection(read({ query: { t: '${CRM_API_TOKEN}' } }, { ROWBRIDGE_SOURCE_ENV_ALLOW: '*' }))).code,
    ).toBe('SOURCE_CONFIG');
    expect(server.requests).toHaveLength(0);
  });

  it('resolves ordinary names, and a secret the allow-list names', async () => {
    await read(
      { query: { region: '${PUBLIC_REGION}', t: '${CRM_API_TOKEN}' } },
      { ROWBRIDGE_SOURCE_ENV_ALLOW: 'PUBLIC_*,CRM_API_TOKEN' },
    );
    expect(server.last().query).toMatchObject({ region: 'eu', t: 'crm-token' });
    const refused = await rejection(
      read({ query: { region: '${PUBLIC_REGION}' } }, { ROWBRIDGE_SOURCE_ENV_ALLOW: 'CRM_API_TOKEN' }),
    );
    expect(refused.message).toContain('PUBLIC_REGION');
  });
});
